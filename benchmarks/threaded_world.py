"""Per-test cost of a trivial 4-rank all_reduce test: ours on threads, ours on process ranks,
PyTorch's own threaded harness, side by side in one run.

For each harness it writes a test file with N such tests, runs it in a fresh interpreter for
two values of N, and reports the *marginal* wall time per test,
(T(N_large) - T(N_small)) / (N_large - N_small), which leaves out interpreter start and
imports. This benchmark may import ``torch.testing._internal`` (it measures us against it).

Usage: python benchmarks/threaded_world.py [--small 2] [--large 20] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

THREADED = '''
import torch
import torch.distributed as dist
from {distributed} import MultiThreadedTestCase
from {utils} import run_tests


class Bench(MultiThreadedTestCase):
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


class Bench(MultiProcessTestCase):
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


def write_file(directory: str, harness: str, count: int) -> str:
    template, test, distributed, utils = HARNESSES[harness]
    tests = "".join(test.format(i=i) for i in range(count))
    path = os.path.join(directory, f"bench_{abs(hash((harness, count)))}.py")
    with open(path, "w") as f:
        f.write(template.format(distributed=distributed, utils=utils, tests=tests))
    return path


def time_file(path: str) -> float:
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"benchmark file {path} failed:\n{completed.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2)
    parser.add_argument("--large", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    if not 0 < args.small < args.large or args.repeats < 1:
        parser.error("need 0 < --small < --large and --repeats >= 1")
    print(f"{os.cpu_count()} CPUs; marginal wall time per test from N={args.small} vs "
          f"N={args.large}, best of {args.repeats}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for harness in HARNESSES:
            times = [min(time_file(write_file(directory, harness, count))
                         for _ in range(args.repeats)) for count in (args.small, args.large)]
            rows.append((harness, (times[1] - times[0]) / (args.large - args.small), times[1]))
            print(f"  measured {harness}", flush=True)
    fastest = min(per_test for _, per_test, _ in rows)
    print(f"\n| harness (trivial 4-rank all_reduce) | per test | N={args.large} file | vs fastest |")
    print("|---|---|---|---|")
    for harness, per_test, total in rows:
        print(f"| {harness} | {per_test * 1000:.1f} ms | {total:.2f} s | "
              f"{per_test / max(fastest, 1e-6):.1f}x |")


if __name__ == "__main__":
    main()
