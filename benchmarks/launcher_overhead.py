"""What a test costs under ``torchrun`` against spawned ranks, on the same test files.

Two files of N 2-rank ``MultiProcessTestCase`` tests are written into a temporary directory:
``empty`` (each test asserts only its rank) and ``all_reduce`` (each test makes a gloo group
with ``rendezvous_init_method()`` and all-reduces a tensor). Each runs as
``torchrun --standalone --nproc-per-node 2 FILE`` (launcher mode: the two launched processes
are the ranks) and as ``python FILE`` (ranks forked for every test), as a marked run (its own
TMPDIR; a process left behind stops the run). Printed, median of the repeats: the wall time
of the whole command, the time unittest reports for the tests (under torchrun, rank 0's; for
spawned ranks it includes the fork server's start in the first test), and the per-test cost
as in ``marginal_cost``: the median time from one test's start to the next's, after the
first.

Usage::

    python benchmarks/launcher_overhead.py [--tests 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run from a checkout without installing the package.
sys.path.insert(0, str(ROOT))

from marginal_cost import NOTE_STARTS, test_gaps  # noqa: E402

from torch_testing_ext._engine.process_tree.marked_run import MarkedRun  # noqa: E402

TEMPLATE = '''
import torch
import torch.distributed as dist
from torch_testing_ext.common_distributed import MultiProcessTestCase, rendezvous_init_method
from torch_testing_ext.common_utils import run_tests
{notes}

class Bench(NotesStarts, MultiProcessTestCase):
    world_size = 2
{tests}

if __name__ == "__main__":
    run_tests()
'''
BODIES = {
    "empty": "self.assertIn(self.rank, (0, 1))",
    "all_reduce": ("dist.init_process_group(self.backend, init_method=rendezvous_init_method(),\n"
                   "                                rank=self.rank, world_size=2)\n"
                   "        t = torch.ones(1)\n"
                   "        dist.all_reduce(t)\n"
                   "        self.assertEqual(t.item(), 2.0)"),
}
RAN = re.compile(r"^Ran (\d+) tests? in ([\d.]+)s", re.M)
RUN_TIMEOUT = 600.0


def run_once(argv: list[str], count: int) -> tuple[float, float, list[float]]:
    """Wall seconds of ``python *argv``, the seconds unittest reports (the first report) and
    the start-to-start times of the tests after the first (the first process's notes)."""
    started = time.monotonic()
    run = MarkedRun(*argv)
    try:
        status, output = run.finish(timeout=RUN_TIMEOUT)
        wall = time.monotonic() - started
        left = run.left_after_bound()
    finally:
        run.close()
    ran = RAN.findall(output)
    if status != 0 or not ran or any(n != str(count) for n, _ in ran) or left:
        raise SystemExit(f"{' '.join(argv)}: exit {status}, {len(left)} processes left; "
                         f"its output ends:\n{output[-3000:]}")
    return wall, float(ran[0][1]), test_gaps(output, count)[1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=10, help="tests in each file, at least 3 (10)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each command; median (3)")
    args = parser.parse_args(argv)
    if args.tests < 3 or args.repeats < 1:
        parser.error("need --tests >= 3 and --repeats >= 1")
    import torch

    modes = {"torchrun": ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"],
             "spawned": []}
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    steps: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="launcher_overhead_") as directory:
        files = {}
        for name, body in BODIES.items():
            path = os.path.join(directory, f"bench_{name}.py")
            tests = "".join(f"\n    def test_{i}(self):\n        {body}\n" for i in range(args.tests))
            Path(path).write_text(TEMPLATE.format(tests=tests, notes=NOTE_STARTS))
            files[name] = path
        for repeat in range(args.repeats):
            for name, path in files.items():
                for mode, prefix in modes.items():
                    wall, tests, gaps = run_once([*prefix, path], args.tests)
                    results.setdefault((name, mode), []).append((wall, tests))
                    steps.setdefault((name, mode), []).extend(gaps)
                    print(f"  run {repeat + 1}/{args.repeats} {name:10} {mode:8}: wall {wall:5.2f} s, "
                          f"tests {tests:5.2f} s", flush=True)
    print(f"\ntorch {torch.__version__}, {os.cpu_count()} cores, {args.tests} tests per file, "
          f"median of {args.repeats}\n")
    print("| 2 ranks | torchrun: wall / tests / per test | spawned: wall / tests / per test |")
    print("|---|---|---|")
    for name in files:
        cells = []
        for mode in modes:
            wall = statistics.median(w for w, _ in results[name, mode])
            tests = statistics.median(t for _, t in results[name, mode])
            cells.append(f"{wall:.1f} s / {tests:.2f} s / "
                         f"{statistics.median(steps[name, mode]) * 1000:.0f} ms")
        print(f"| {args.tests} tests, {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
