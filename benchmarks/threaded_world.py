"""Per-test cost of a trivial 4-rank all_reduce test: ours on threads, ours on process ranks,
PyTorch's own threaded harness, side by side in one run.

For each harness it writes a test file with N such tests and reports the marginal cost of a
test (see ``marginal_cost``: the median start-to-start time after the first test). Like
``multiprocess_overhead.py``, it imports ``torch.testing._internal``: it measures us against it.

Usage: python benchmarks/threaded_world.py [--tests 20] [--repeats 1]
"""

from __future__ import annotations

import os
import tempfile

from marginal_cost import NOTE_STARTS, marginal, parse_counts

THREADED = '''
import torch
import torch.distributed as dist
from {distributed} import MultiThreadedTestCase
from {utils} import run_tests
{notes}

class Bench(NotesStarts, MultiThreadedTestCase):
    @property
    def world_size(self):
        return 4

    def setUp(self):
        super().setUp()
        self._spawn_threads()

{tests}

if __name__ == "__main__":
    run_tests()
'''

THREADED_TEST = '''
    def test_all_reduce_{i}(self):
        t = torch.ones(4)
        dist.all_reduce(t)
        assert t.sum().item() == 16.0
'''

PROCESSES = '''
import torch
import torch.distributed as dist
from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import run_tests
{notes}

class Bench(NotesStarts, MultiProcessTestCase):
    world_size = 4

{tests}

if __name__ == "__main__":
    run_tests()
'''

PROCESS_TEST = '''
    def test_all_reduce_{i}(self):
        dist.init_process_group("gloo", init_method=f"file://{{self.file_name}}", rank=self.rank,
                                world_size=self.world_size)
        t = torch.ones(4)
        dist.all_reduce(t)
        assert t.sum().item() == 16.0
'''

HARNESSES = {
    "torch_testing_ext, threads": (THREADED, THREADED_TEST, "torch_testing_ext.common_distributed",
                                   "torch_testing_ext.common_utils"),
    "torch_testing_ext, process ranks": (PROCESSES, PROCESS_TEST, "", ""),
    "PyTorch MultiThreadedTestCase": (THREADED, THREADED_TEST,
                                      "torch.testing._internal.common_distributed",
                                      "torch.testing._internal.common_utils"),
}


def source(harness: str, count: int) -> str:
    template, test, distributed, utils = HARNESSES[harness]
    tests = "".join(test.format(i=i) for i in range(count))
    return template.format(distributed=distributed, utils=utils, tests=tests, notes=NOTE_STARTS)


def main() -> None:
    args = parse_counts(__doc__.splitlines()[0], tests=20)
    print(f"{os.cpu_count()} CPUs; per test: median start-to-start time after the first test, "
          f"{args.tests} tests per file, {args.repeats} run(s)", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for harness in HARNESSES:
            per_test = marginal(directory, source(harness, args.tests), args.tests, args.repeats)
            rows.append((harness, per_test))
            print(f"  measured {harness}", flush=True)
    fastest = min(per_test for _, per_test in rows)
    print("\n| harness (trivial 4-rank all_reduce) | per test | vs fastest |")
    print("|---|---|---|")
    for harness, per_test in rows:
        print(f"| {harness} | {per_test * 1000:.1f} ms | {per_test / max(fastest, 1e-6):.1f}x |")


if __name__ == "__main__":
    main()
