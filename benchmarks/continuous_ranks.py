"""Per-test cost of small distributed tests on kept ranks vs fresh ranks: ours and PyTorch's,
side by side in one run.

Two tests, each written into its own file: a trivial 2-rank test (it asserts the world size) and a
4-rank gloo ``all_reduce`` (the sum of ones is 4). Four harnesses run them:

* ``ours-fresh``: ``torch_testing_ext`` ``MultiProcessTestCase``, world_size ranks forked per
  test from the preloaded server; the test makes its process group, the harness destroys it.
* ``ours-kept``: ``torch_testing_ext`` ``MultiProcContinuousTest``, the class's ranks and
  default group are made once and every test is sent to them.
* ``torch-kept``: PyTorch's ``MultiProcContinuousTest`` (spawned workers, a group per class).
* ``torch-fresh``: PyTorch's ``MultiProcessTestCase`` (an interpreter spawned per rank per
  test; the test makes and destroys its group).

For each harness and test it writes a file of N tests into a temporary directory and runs it
as ``python FILE`` (it must report all its tests passed, else the run stops with the file's
output). The per-test cost is ``marginal_cost``'s: the median time from one test's start to
the next's in the test's own process, leaving out the first test, whose time includes
starting the class's ranks (shown as "first test"). Repeats are interleaved (each repeat runs every
file once) and pooled. Like ``threaded_world.py``, it imports ``torch.testing._internal``: it
measures us against it. Each file runs with a TMPDIR of its own; the temporary directory of the
files is removed at the end.

Usage::

    python benchmarks/continuous_ranks.py [--tests 42] [--tests-spawn 6] [--repeats 3]
    python benchmarks/continuous_ranks.py --only ours-kept,ours-fresh --tests 3 --repeats 1
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run from a checkout without installing the package.
sys.path.insert(0, str(ROOT))

from marginal_cost import NOTE_STARTS, run_marked, test_gaps  # noqa: E402

HARNESSES = {  # name: (base class, module of the base, module of run_tests, description)
    "ours-fresh": ("MultiProcessTestCase", "torch_testing_ext.common_distributed",
                   "torch_testing_ext.common_utils", "ours, fresh ranks (MultiProcessTestCase)"),
    "ours-kept": ("MultiProcContinuousTest", "torch_testing_ext.common_distributed",
                  "torch_testing_ext.common_utils", "ours, kept ranks (MultiProcContinuousTest)"),
    "torch-kept": ("MultiProcContinuousTest", "torch.testing._internal.common_distributed",
                   "torch.testing._internal.common_utils",
                   "PyTorch MultiProcContinuousTest"),
    "torch-fresh": ("MultiProcessTestCase", "torch.testing._internal.common_distributed",
                    "torch.testing._internal.common_utils", "PyTorch MultiProcessTestCase"),
}
SPAWNING = "torch-fresh"  # its tests take seconds each: its files have --tests-spawn tests

TESTS = {  # name: (world size, body after the group exists, table label)
    "trivial": (2, "assert dist.get_world_size() == 2", "trivial 2-rank"),
    "all_reduce": (4, "t = torch.ones(1)\n        dist.all_reduce(t)\n        assert t.item() == 4.0",
                   "4-rank all_reduce"),
}

TEMPLATE = '''
import torch
import torch.distributed as dist
from {module} import {base}
from {utils} import run_tests
{notes}

class Bench(NotesStarts, {base}):
    world_size = {world_size}
{hooks}
{tests}

if __name__ == "__main__":
    run_tests()
'''

KEPT_HOOKS = '''
    @classmethod
    def backend_str(cls):
        return "gloo"
'''

TORCH_FRESH_HOOKS = '''
    def setUp(self):
        super().setUp()
        self._spawn_processes()
'''

KEPT_TEST = '''
    def test_{name}_{i}(self):
        {body}
'''

OURS_FRESH_TEST = '''
    def test_{name}_{i}(self):
        dist.init_process_group("gloo", init_method=f"file://{{self.file_name}}", rank=self.rank,
                                world_size=self.world_size)
        {body}
'''

TORCH_FRESH_TEST = '''
    def test_{name}_{i}(self):
        dist.init_process_group("gloo", init_method=f"file://{{self.file_name}}", rank=self.rank,
                                world_size=self.world_size)
        {body}
        dist.destroy_process_group()
'''

RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
FILE_TIMEOUT = 1200.0  # seconds for one file


def source(harness: str, test: str, count: int) -> str:
    base, module, utils, _ = HARNESSES[harness]
    world_size, body, _ = TESTS[test]
    test_template, hooks = {
        "ours-fresh": (OURS_FRESH_TEST, ""),
        "ours-kept": (KEPT_TEST, KEPT_HOOKS),
        "torch-kept": (KEPT_TEST, KEPT_HOOKS),
        "torch-fresh": (TORCH_FRESH_TEST, TORCH_FRESH_HOOKS),
    }[harness]
    tests = "".join(test_template.format(name=test, i=i, body=body) for i in range(count))
    return TEMPLATE.format(base=base, module=module, utils=utils, world_size=world_size,
                           hooks=hooks, tests=tests, notes=NOTE_STARTS)


def check_passed(path: str, count: int, status: int, output: str) -> None:
    """Stop the run unless the file exited 0 and unittest reported ``count`` tests, all OK."""
    ran = RAN.findall(output)
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if status != 0 or ran != [str(count)] or "OK" not in lines:
        raise SystemExit(f"benchmark file {path} did not pass all {count} tests "
                         f"(exit {status}); its output ends:\n{output[-3000:]}")


def run_file(path: str, count: int, ours: bool) -> tuple[float, list[float]]:
    """The first test's time and the start-to-start times of the others (``marginal_cost``) of
    ``python path``. The file runs as
    a marked run (its own TMPDIR; every process it starts, in any session, is seen); the run
    stops if a test did not pass, or if one of ``ours`` leaves a process behind 1 s after it
    exits (PyTorch's harness leaves its resource tracker to init: that is only noted)."""
    status, output, left = run_marked([path], FILE_TIMEOUT)
    if left:
        note = f"benchmark file {path} left {len(left)} processes behind (killed them)"
        if ours:
            raise SystemExit(note)
        print(f"  note: {note}", flush=True)
    check_passed(path, count, status, output)
    return test_gaps(output, count)


def ratio(fresh: float, kept: float) -> str:
    return f"{fresh / kept:.1f}x" if kept > 0 else "n/a"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=42,
                        help="N: tests in each file, all harnesses but torch-fresh (42)")
    parser.add_argument("--tests-spawn", type=int, default=None,
                        help="N for torch-fresh, whose tests take seconds each (default min(6, --tests))")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each file, pooled (3)")
    parser.add_argument("--only", default=",".join(HARNESSES),
                        help=f"comma-separated harnesses to run, of {','.join(HARNESSES)}")
    args = parser.parse_args(argv)
    if args.tests_spawn is None:
        args.tests_spawn = min(6, args.tests)
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in args.only if name not in HARNESSES]
    if unknown or not args.only:
        parser.error(f"--only takes harnesses among {','.join(HARNESSES)}, got {unknown or 'none'}")
    if min(args.tests, args.tests_spawn) < 3 or args.repeats < 1:
        parser.error("need --tests >= 3, --tests-spawn >= 3 and --repeats >= 1")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    import torch  # after the arguments: a bad command line fails fast

    counts = {h: args.tests_spawn if h == SPAWNING else args.tests for h in args.only}
    print(f"torch {torch.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} cores; "
          f"per-test cost: median start-to-start time after the first test, {args.repeats} runs",
          flush=True)
    steps: dict[tuple[str, str], list[float]] = {}
    firsts: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="continuous_ranks_") as directory:
        files = {}
        for harness in args.only:
            for test in TESTS:
                path = os.path.join(directory, f"bench_{harness.replace('-', '_')}_{test}.py")
                with open(path, "w") as f:
                    f.write(source(harness, test, counts[harness]))
                files[harness, test] = path
        for repeat in range(args.repeats):
            for (harness, test), path in files.items():
                first, gaps = run_file(path, counts[harness], ours=harness.startswith("ours"))
                firsts.setdefault((harness, test), []).append(first)
                steps.setdefault((harness, test), []).extend(gaps)
                print(f"  run {repeat + 1}/{args.repeats} {harness:11} {test:10}: first test "
                      f"{first:6.2f} s, then {statistics.median(gaps) * 1000:8.1f} ms per test",
                      flush=True)

    per_test = {key: statistics.median(values) for key, values in steps.items()}
    labels = [TESTS[t][2] for t in TESTS]
    print()
    print(f"{args.repeats} runs of each file\n")
    print("| harness | " + " | ".join(f"{label}: per test" for label in labels) + " | "
          + " | ".join(f"{label}: first test" for label in labels) + " | tests per file |")
    print("|---|" + "---|" * (2 * len(TESTS) + 1))
    for harness in args.only:
        cells = [f"{per_test[harness, t] * 1000:.1f} ms" for t in TESTS]
        cells += [f"{statistics.median(firsts[harness, t]):.2f} s" for t in TESTS]
        print(f"| {HARNESSES[harness][3]} | " + " | ".join(cells) + f" | {counts[harness]} |")
    if "ours-fresh" in args.only and "ours-kept" in args.only:
        ratios = ", ".join(f"{TESTS[t][2]} {ratio(per_test['ours-fresh', t], per_test['ours-kept', t])}"
                           for t in TESTS)
        print(f"\nours, fresh / kept per-test cost: {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
