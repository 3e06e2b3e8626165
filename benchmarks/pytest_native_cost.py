"""Per-test cost of a pytest-native 2-rank test (``@pytest.mark.world_size``) on fresh and kept
ranks, against the same test as a ``MultiProcessTestCase``, side by side in one run.

Each harness gets a file of N copies of one test, run with ``python -m pytest`` from a
temporary directory whose ``conftest.py`` notes, in the test process, when each test starts
(``pytest_runtest_logstart``) and prints the times at the end. The cost of one more test is
``marginal_cost``'s: the median time from one test's start to the next's, the first test left
out (it pays for the fork server and, on kept ranks, the world). Two bodies:

* ``trivial``: each rank asserts its rank is below the world size (no process group);
* ``barrier``: each rank joins the default group and calls ``dist.barrier()`` (the fixture
  ``process_group``; a ``MultiProcessTestCase`` makes and destroys its group in the test).

Harnesses: ``native-fresh`` (``world_size(2)``), ``native-kept`` (``world_size(2,
ranks="kept")`` on a class), ``testcase-fresh`` (``MultiProcessTestCase``, ``world_size = 2``).
The targets of issue #23 are printed beside the figures (fresh: at most 0.15 s a test, kept:
at most 10 ms); nothing is asserted. Repeats are interleaved and pooled.

Usage::

    python benchmarks/pytest_native_cost.py [--tests 20] [--repeats 3]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from marginal_cost import parse_counts, test_gaps

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = '''
import time

_STARTS = []


def pytest_runtest_logstart(nodeid, location):
    _STARTS.append(time.perf_counter())


def pytest_unconfigure(config):
    if _STARTS:
        print("TEST_STARTS " + " ".join(map(repr, _STARTS)), flush=True)
'''

BODIES = {
    "trivial": ("assert rank < 2", "assert self.rank < 2"),
    "barrier": ("dist.barrier()",
                "dist.init_process_group('gloo', init_method=f'file://{self.file_name}', rank=self.rank, "
                "world_size=2)\n        dist.barrier()\n        dist.destroy_process_group()"),
}


def native_file(tests: int, body: str, kept: bool) -> str:
    fixtures = "rank, process_group" if "dist." in body else "rank"
    if kept:
        return f'''import pytest
import torch.distributed as dist


@pytest.mark.world_size(2, ranks="kept")
class TestKept:
    @pytest.mark.parametrize("i", range({tests}))
    def test_one(self, i, {fixtures}):
        {body}
'''
    return f'''import pytest
import torch.distributed as dist


@pytest.mark.parametrize("i", range({tests}))
@pytest.mark.world_size(2)
def test_one(i, {fixtures}):
    {body}
'''


def testcase_file(tests: int, body: str) -> str:
    return f'''import torch.distributed as dist
from torch_testing_ext.common_distributed import MultiProcessTestCase


class TestFresh(MultiProcessTestCase):
    world_size = 2

    def check(self):
        {body}

    for _i in range({tests}):
        locals()[f"test_{{_i}}"] = lambda self: self.check()
    del _i
'''


def run(directory: Path, name: str, text: str, tests: int) -> tuple[float, list[float], float]:
    """Run one file under pytest; its first test's time, the later start-to-start times, and
    the wall time of the whole run."""
    path = directory / f"test_{name}.py"
    path.write_text(text)
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path.name],
                               cwd=directory, env=environ, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{path.name} did not pass:\n{completed.stdout[-3000:]}{completed.stderr[-2000:]}")
    first, gaps = test_gaps(completed.stdout, tests)
    return first, gaps, wall


def main() -> None:
    args = parse_counts(__doc__.splitlines()[0], tests=20, repeats=3)
    harnesses = {
        "native-fresh": lambda body: native_file(args.tests, body[0], kept=False),
        "native-kept": lambda body: native_file(args.tests, body[0], kept=True),
        "testcase-fresh": lambda body: testcase_file(args.tests, body[1]),
    }
    results: dict[tuple[str, str], tuple[list[float], list[float], list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="pytest-native-cost-") as temp:
        directory = Path(temp)
        (directory / "conftest.py").write_text(CONFTEST)
        for _ in range(args.repeats):
            for body_name, body in BODIES.items():
                for harness, make in harnesses.items():
                    first, gaps, wall = run(directory, f"{harness.replace('-', '_')}_{body_name}", make(body),
                                            args.tests)
                    firsts, pooled, walls = results.setdefault((body_name, harness), ([], [], []))
                    firsts.append(first)
                    pooled.extend(gaps)
                    walls.append(wall)
    print(f"# pytest-native per-test cost, {args.tests} tests a file, {args.repeats} runs each (interleaved)")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {when}")
    print()
    print("| body | harness | per test (median) | first test | file wall (median) | target |")
    print("|---|---|---|---|---|---|")
    targets = {"native-fresh": 0.150, "native-kept": 0.010}
    for (body_name, harness), (firsts, pooled, walls) in results.items():
        per_test = statistics.median(pooled)
        target = targets.get(harness)
        verdict = "" if target is None else f"<= {target * 1000:.0f} ms: {'met' if per_test <= target else 'NOT met'}"
        print(f"| {body_name} | {harness} | {per_test * 1000:.1f} ms | {statistics.median(firsts):.2f} s | "
              f"{statistics.median(walls):.1f} s | {verdict} |")


if __name__ == "__main__":
    main()
