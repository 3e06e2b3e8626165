"""Per-test cost of small distributed tests on kept ranks vs fresh ranks: ours and PyTorch's,
side by side in one run.

Two tests, each in its own class: a trivial 2-rank test (it asserts the world size) and a
4-rank gloo ``all_reduce`` (the sum of ones is 4). Four harnesses run them:

* ``ours-fresh``: ``torch_testing_ext`` ``MultiProcessTestCase``, world_size ranks forked per
  test from the preloaded server; the test makes its process group, the harness destroys it.
* ``ours-kept``: ``torch_testing_ext`` ``MultiProcContinuousTest``, the class's ranks and
  default group are made once and every test is sent to them.
* ``torch-kept``: PyTorch's ``MultiProcContinuousTest`` (spawned workers, a group per class).
* ``torch-fresh``: PyTorch's ``MultiProcessTestCase`` (an interpreter spawned per rank per
  test; the test makes and destroys its group).

For each harness and test it writes a file with S tests and one with L tests into a temporary
directory, runs each as ``python FILE`` (each must report all its tests passed, else the run
stops with the file's output), and reports the per-test cost (T(L) - T(S)) / (L - S), in which
interpreter start, imports and the class's start cancel out, with the median of the repeats.
It also prints T(S) (the per-class start, with S tests) and our fresh/kept ratio. Runs are
interleaved (each repeat times every file once), so a change in machine load spreads over all
harnesses. Like ``threaded_world.py``, it imports ``torch.testing._internal``: it measures us
against it. The temporary directory (also the files' TMPDIR) is removed at the end.

Usage::

    python benchmarks/continuous_ranks.py [--small 2] [--large 62] [--large-spawn 6] [--repeats 3]
    python benchmarks/continuous_ranks.py --only ours-kept,ours-fresh --small 1 --large 2
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

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
SPAWNING = "torch-fresh"  # seconds per test: measured with --large-spawn tests

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


class Bench({base}):
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
                           hooks=hooks, tests=tests)


def check_passed(path: str, count: int, completed: subprocess.CompletedProcess) -> None:
    """Stop the run unless the file exited 0 and unittest reported ``count`` tests, all OK."""
    output = completed.stdout + completed.stderr
    ran = RAN.findall(output)
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if completed.returncode != 0 or ran != [str(count)] or not lines or lines[-1] != "OK":
        raise SystemExit(f"benchmark file {path} did not pass all {count} tests "
                         f"(exit {completed.returncode}); its output ends:\n{output[-3000:]}")


def time_file(path: str, count: int, env: dict[str, str]) -> float:
    """Wall seconds of ``python path``, in its own session; stops the run if a test did not
    pass, or if a process of its session outlives it (those are killed)."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=FILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise SystemExit(f"benchmark file {path} took over {FILE_TIMEOUT:.0f} s (killed)")
    elapsed = time.perf_counter() - started
    deadline = time.monotonic() + 5.0
    while _session_alive(process.pid):  # its session id is its pid (start_new_session)
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            raise SystemExit(f"benchmark file {path} left processes behind (killed them)")
        time.sleep(0.05)
    check_passed(path, count, subprocess.CompletedProcess(process.args, process.returncode,
                                                          stdout, stderr))
    return elapsed


def _session_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def ratio(fresh: float, kept: float) -> str:
    return f"{fresh / kept:.1f}x" if kept > 0 else "n/a (kept cost <= 0: below the noise)"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=2, help="S: tests in the small file (2)")
    parser.add_argument("--large", type=int, default=62,
                        help="L: tests in the large file, all harnesses but torch-fresh (62)")
    parser.add_argument("--large-spawn", type=int, default=None,
                        help="L for torch-fresh, seconds per test (default min(6, --large))")
    parser.add_argument("--repeats", type=int, default=3, help="timings of each file; median (3)")
    parser.add_argument("--only", default=",".join(HARNESSES),
                        help=f"comma-separated harnesses to run, of {','.join(HARNESSES)}")
    args = parser.parse_args(argv)
    if args.large_spawn is None:
        args.large_spawn = min(6, args.large)
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in args.only if name not in HARNESSES]
    if unknown or not args.only:
        parser.error(f"--only takes harnesses among {','.join(HARNESSES)}, got {unknown or 'none'}")
    if not 0 < args.small < min(args.large, args.large_spawn) or args.repeats < 1:
        parser.error("need 0 < --small < --large, --small < --large-spawn and --repeats >= 1")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    import torch  # after the arguments: a bad command line fails fast

    sizes = {h: (args.small, args.large_spawn if h == SPAWNING else args.large) for h in args.only}
    print(f"torch {torch.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} cores; "
          f"per-test cost (T(L) - T(S)) / (L - S), median of {args.repeats}", flush=True)
    walls: dict[tuple[str, str, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="continuous_ranks_") as directory:
        tmp = os.path.join(directory, "tmp")
        os.mkdir(tmp)
        env = dict(os.environ, TMPDIR=tmp)
        files = {}
        for harness in args.only:
            for test in TESTS:
                for count in sizes[harness]:
                    path = os.path.join(directory, f"bench_{harness.replace('-', '_')}_{test}_{count}.py")
                    with open(path, "w") as f:
                        f.write(source(harness, test, count))
                    files[harness, test, count] = path
        for repeat in range(args.repeats):
            for (harness, test, count), path in files.items():
                walls.setdefault((harness, test, count), []).append(time_file(path, count, env))
                print(f"  repeat {repeat + 1}/{args.repeats} {harness:11} {test:10} {count:3} tests: "
                      f"{walls[harness, test, count][-1]:7.2f} s", flush=True)

    median = {key: statistics.median(values) for key, values in walls.items()}
    per_test = {(h, t): (median[h, t, sizes[h][1]] - median[h, t, sizes[h][0]])
                / (sizes[h][1] - sizes[h][0]) for h in args.only for t in TESTS}
    labels = [TESTS[t][2] for t in TESTS]
    print()
    print(f"torch {torch.__version__}, {os.cpu_count()} cores, median of {args.repeats} repeats\n")
    print("| harness | " + " | ".join(f"{label} per test" for label in labels) + " | "
          + " | ".join(f"{label} T(S)" for label in labels) + " | S / L |")
    print("|---|" + "---|" * (2 * len(TESTS) + 1))
    for harness in args.only:
        small, large = sizes[harness]
        cells = [f"{per_test[harness, t] * 1000:.1f} ms" for t in TESTS]
        cells += [f"{median[harness, t, small]:.2f} s" for t in TESTS]
        print(f"| {HARNESSES[harness][3]} | " + " | ".join(cells) + f" | {small} / {large} |")
    if "ours-fresh" in args.only and "ours-kept" in args.only:
        ratios = ", ".join(f"{TESTS[t][2]} {ratio(per_test['ours-fresh', t], per_test['ours-kept', t])}"
                           for t in TESTS)
        print(f"\nours, fresh / kept per-test cost: {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
