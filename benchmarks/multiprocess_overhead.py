"""Per-test cost of a multi-process test: torch_testing_ext vs PyTorch's own harness.

For each harness it writes a test file with N trivial 2-rank gloo ``all_reduce`` tests (or N
tests skipped by ``skip_if_lt_x_gpu(8)``) and reports the marginal cost of a test (see
``marginal_cost``: the median start-to-start time after the first test). Like
``threaded_world.py``, it imports ``torch.testing._internal``: it measures us against it side
by side.

Usage: python benchmarks/multiprocess_overhead.py [--tests 5] [--repeats 1]
"""

from __future__ import annotations

import os
import tempfile
import textwrap

from marginal_cost import NOTE_STARTS, marginal, parse_counts

HARNESSES = {
    "torch_testing_ext": ("torch_testing_ext.common_distributed", "torch_testing_ext.common_utils"),
    "pytorch (torch.testing._internal)": ("torch.testing._internal.common_distributed",
                                          "torch.testing._internal.common_utils"),
}

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
from {distributed} import MultiProcessTestCase, skip_if_lt_x_gpu
from {utils} import run_tests
{notes}

class Bench(NotesStarts, MultiProcessTestCase):
    @property
    def world_size(self):
        return 2

    def setUp(self):
        super().setUp()
        self._spawn_processes()

    def tearDown(self):
        super().tearDown()
        try:
            os.remove(self.file_name)
        except OSError:
            pass

{tests}

if __name__ == "__main__":
    run_tests()
'''

ALLREDUCE = '''
    def test_allreduce_{i}(self):
        store = dist.FileStore(self.file_name, self.world_size)
        dist.init_process_group("gloo", store=store, rank=self.rank, world_size=self.world_size)
        t = torch.ones(4)
        dist.all_reduce(t)
        assert t.sum().item() == 8.0
        dist.destroy_process_group()
'''

SKIPPED = '''
    @skip_if_lt_x_gpu(8)
    def test_skipped_{i}(self):
        pass
'''


def source(harness: str, kind: str, count: int) -> str:
    distributed, utils = HARNESSES[harness]
    body = "".join((ALLREDUCE if kind == "allreduce" else SKIPPED).format(i=i) for i in range(count))
    return TEMPLATE.format(distributed=distributed, utils=utils, notes=NOTE_STARTS,
                           tests=textwrap.indent(textwrap.dedent(body), "    "))


def main() -> None:
    args = parse_counts(__doc__.splitlines()[0], tests=5)
    print(f"{os.cpu_count()} CPUs; per test: median start-to-start time after the first test")
    results = {}
    ours, theirs = HARNESSES
    with tempfile.TemporaryDirectory() as directory:
        for kind in ("allreduce", "skipped"):
            for harness in HARNESSES:
                # Ours are cheap enough to run many more of (a steadier median).
                count = args.tests * (4 if harness == ours else 1)
                seconds = marginal(directory, source(harness, kind, count), count, args.repeats)
                results[harness, kind] = seconds
                print(f"  {kind:10} {harness:36} {seconds:8.4f} s/test  ({count} tests)", flush=True)
    for kind, label in (("allreduce", "trivial 2-rank all_reduce"), ("skipped", "parent-skipped test")):
        ratio = results[theirs, kind] / max(results[ours, kind], 1e-4)
        print(f"{label}: torch_testing_ext {results[ours, kind]:.4f} s, PyTorch {results[theirs, kind]:.3f} s, "
              f"{ratio:.0f}x lower per-test cost")


if __name__ == "__main__":
    main()
