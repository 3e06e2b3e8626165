"""pytest-native distributed tests: ``@pytest.mark.world_size`` and the rank fixtures.

In process: the marker's arguments (every bad one is one line naming it), the ranks'
session options, and how a pytest report's assertion becomes a rank's headline. Then ONE real
``python -m pytest`` session of every fixture file (one test process and one fork server for
them all), each file's tests read from its JUnit XML and output: fresh ranks (a pass with a
collective, one test per size with distinct ids, parametrize and ``tmp_path`` in ranks, a failure
on rank 1 named with pytest's assertion, a skip in every rank, xfail, a ``skipif`` decided before
any rank starts, a crash, a hang on rank 1 with a 2 s timeout), kept ranks (state kept between
two tests; a failure closes the world; a class of two sizes), thread ranks, ranks that leave their
test early (KeyboardInterrupt, pytest.exit(), sys.exit(0), in the body or a fixture, or a session
stopped outside the test: never a pass, on fresh, kept, thread and launched ranks), ranks that
close their stdout and stderr, addopts that only the test process acts on, bad markers as errors
of their own tests, and nothing left behind. Runs of their own: a bad marker's file's other tests
selected alone, pytest-xdist, the driver, and ``torchrun -m pytest``.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import types
import uuid
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from torch_testing_ext._engine.pytest_native.pytest_worlds import rank_facts_for
from torch_testing_ext._engine.pytest_native.rank_session import session_options
from torch_testing_ext._engine.pytest_native.world_size_mark import MarkError, WorldSizeMark, parse_mark, size_id
from torch_testing_ext._engine.reporting.stack_dumps import is_harness_file
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.worlds.interrupts import InterruptListener, Terminated
from torch_testing_ext._engine.worlds.outcomes import RankOutcome, combine, outcome_of
from torch_testing_ext.common_utils import TestCase

from fixtures.fake_devices import pretend_accelerator
from fixtures.pytest_runs import (
    PytestRun,
    failure_section,
    leftover_files,
    line_of,
    processes_with,
    summary_lines,
)
from fixtures.runs import checkout_env

FRESH = '''
import os, time
import pytest, torch, torch.distributed as dist

@pytest.mark.world_size(2)
def test_all_reduce(rank, world_size, device, backend, process_group):
    t = torch.full((1,), float(rank + 1), device=device)
    dist.all_reduce(t)
    assert (t.item(), world_size, backend, dist.get_rank()) == (3.0, 2, "gloo", rank)

@pytest.mark.world_size([2, 3])
def test_sizes(world_size, process_group):
    assert dist.get_world_size() == world_size

@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.world_size(2, timeout=30)
def test_params(rank, n, tmp_path, process_group):
    (tmp_path / "mine").write_text(f"{rank} {n}")
    dist.barrier()
    assert (tmp_path / "mine").read_text() == f"{rank} {n}"  # each rank has its own tmp_path

@pytest.mark.world_size(2)
def test_fails_on_rank_1(rank):
    value = rank * 7
    assert value == 0

@pytest.mark.world_size(2)
def test_skips(rank):
    pytest.skip("nothing to do on this machine")

@pytest.mark.world_size(2)
@pytest.mark.xfail(reason="a known bug", strict=True)
def test_xfails(rank):
    assert rank == 0

@pytest.mark.world_size(2)
@pytest.mark.skipif(True, reason="decided before the ranks")
def test_skipif(rank):
    open(os.path.join(os.environ["SELFTEST_OUT"], "skipif-ran"), "w").close()

@pytest.mark.world_size(2)
def test_dies_on_rank_1(rank):
    if rank == 1:
        os._exit(7)

@pytest.mark.world_size(2, timeout=2)
def test_hangs_on_rank_1(rank):
    if rank == 1:
        time.sleep(120)

def test_rank_without_a_marker(rank):
    pass
'''

KEPT = '''
import os
import pytest, torch.distributed as dist

PIDS = {}

@pytest.mark.world_size(2, ranks="kept")
class TestKept:
    def test_a(self, rank, process_group):
        PIDS["a"] = (os.getpid(), id(process_group))
        dist.barrier()

    def test_b(self, rank, process_group):
        assert PIDS["a"] == (os.getpid(), id(process_group))  # the same rank process and group
        assert rank == 0

    def test_c(self, rank, process_group):
        assert "a" not in PIDS  # test_b failed on rank 1: this is a new world
'''

THREADS = '''
import pytest, torch, torch.distributed as dist

@pytest.mark.world_size(4, ranks="threads")
def test_all_reduce_on_threads(rank, world_size, backend, process_group):
    t = torch.ones(1) * rank
    dist.all_reduce(t)
    assert (t.item(), world_size, backend) == (6.0, 4, "threaded")

@pytest.mark.world_size(2, ranks="threads")
def test_fails_on_thread_rank_1(rank):
    assert rank != 1
'''

KEPT_SIZES = '''
import os
import pytest

PIDS = {}

@pytest.mark.world_size([2, 3], ranks="kept")
class TestSized:
    def test_a(self, rank, world_size):
        PIDS[world_size] = os.getpid()

    def test_b(self, rank, world_size):
        assert PIDS[world_size] == os.getpid()  # the world test_a of this size ran on
'''

# Ways a rank leaves a test other than by returning, on one rank of two, on the kind of ranks
# the module's marker names. Thread ranks set fixtures up once, in the test's thread (pytest's
# own rules hold there): their file stops before the fixtures' tests.
LEAVING = '''
import sys
import pytest
from torch_testing_ext.common_distributed import TEST_SKIPS

pytestmark = pytest.mark.world_size(2, ranks="{ranks}")

def test_interrupts(rank):
    if rank == 1:
        raise KeyboardInterrupt

def test_exits(rank):
    if rank == 1:
        pytest.exit("why")

def test_exits_0(rank):
    if rank == 1:
        sys.exit(0)

def test_exits_with_a_skip_code(rank):
    sys.exit(TEST_SKIPS["small_worldsize"].exit_code)

def test_passes_after_them(rank):
    pass

# -- fixtures and the session (not on thread ranks) --

@pytest.fixture
def interrupts_in_setup(rank):
    if rank == 1:
        raise KeyboardInterrupt
    yield

@pytest.fixture
def exits_in_teardown(rank):
    yield
    if rank == 1:
        pytest.exit("from teardown")

def test_interrupts_in_setup(rank, interrupts_in_setup):
    pass

def test_exits_in_teardown(rank, exits_in_teardown):
    pass

def test_session_stops_before_the_test(rank):
    pass

def test_session_stops_after_the_test(rank):
    pass

def test_passes_at_the_end(rank):
    pass
'''

# A plugin of the ranks' sessions (a conftest) that interrupts rank 1's session outside the
# test's phases, before and after the test: its protocol never completes.
STOPPING_CONFTEST = '''
from torch_testing_ext._engine.worlds.rank_facts import current_rank_facts

def _on_rank_1(nodeid, name):
    facts = current_rank_facts()
    return facts is not None and facts.rank == 1 and nodeid.endswith(name)

def pytest_runtest_logstart(nodeid, location):
    if _on_rank_1(nodeid, "test_session_stops_before_the_test"):
        raise KeyboardInterrupt

def pytest_runtest_logfinish(nodeid, location):
    if _on_rank_1(nodeid, "test_session_stops_after_the_test"):
        raise KeyboardInterrupt
'''


def leaving_source(ranks):
    """LEAVING on ``ranks`` ranks (on thread ranks, without its fixtures' and session's tests)."""
    source = LEAVING.format(ranks=ranks)
    return source.split("# -- fixtures")[0] if ranks == "threads" else source


def left_with(file_name, fixtures=True):
    """{test of LEAVING: ``rank 1 left the test with <how> at <file:line>``}, the words of
    worlds.outcomes, for LEAVING written as ``file_name`` (``fixtures``: its fixtures' tests too)."""
    def at(text, nth=1):
        return f"at {file_name}:{line_of(LEAVING, text, nth)}"

    exit_why, exit_teardown = 'pytest.exit("why")', 'pytest.exit("from teardown")'
    words = {"test_interrupts": f"KeyboardInterrupt {at('raise KeyboardInterrupt')}",
             "test_exits": f"pytest.exit('why') {at(exit_why)}",
             "test_exits_0": f"sys.exit(0) {at('sys.exit(0)')}"}
    if fixtures:
        words.update({"test_interrupts_in_setup": f"KeyboardInterrupt {at('raise KeyboardInterrupt', 2)}",
                      "test_exits_in_teardown": f"pytest.exit('from teardown') {at(exit_teardown)}"})
    return {test: f"rank 1 left the test with {how}" for test, how in words.items()}


# One file of good tests and tests with bad markers: each bad one is an error of its own test.
BAD_MARKERS = '''
import pytest

@pytest.mark.world_size(0)
def test_zero(rank):
    pass

@pytest.mark.world_size("x")
def test_not_a_size(rank):
    pass

@pytest.mark.world_size(2, timeout=-1)
def test_timeout(rank):
    pass

@pytest.mark.world_size([2, 2], ranks="bogus", size=3)
def test_three_bad_arguments(rank, world_size):
    pass

def test_good():
    pass

@pytest.mark.world_size(2, ranks="bogus")
class TestBadKind:
    def test_a(self, rank):
        pass

    def test_b(self, rank):
        pass

@pytest.mark.world_size(2, ranks="threads")
def test_good_on_ranks(rank):
    pass
'''
KINDS = "'fresh', 'kept', 'threads'"
BAD = {
    "test_zero": "world_size=0: expected a positive integer",
    "test_not_a_size": "world_size='x': expected a positive integer",
    "test_timeout": "world_size(timeout=...)=-1: expected a positive number of seconds",
    "test_three_bad_arguments": f"world_size([2, 2]): a size is given twice; world_size(ranks='bogus'): expected "
                                f"one of {KINDS}; world_size(..., size=...): unknown argument; expected one of "
                                f"timeout, ranks, allow_cpu",
    "TestBadKind.test_a": f"world_size(ranks='bogus'): expected one of {KINDS}",
    "TestBadKind.test_b": f"world_size(ranks='bogus'): expected one of {KINDS}",
}

LAUNCHED = '''
import pytest, torch, torch.distributed as dist

@pytest.mark.world_size(2)
def test_all_reduce(rank, device, process_group):
    t = torch.ones(1, device=device)
    dist.all_reduce(t)
    assert t.item() == 2.0

@pytest.mark.world_size(2)
def test_fails_on_rank_1(rank):
    assert rank == 0
'''


def junit_cases(path):
    """{(module or class name, test name): ("passed" | "failure" | "error" | "skipped", seconds)} from JUnit XML."""
    root = ElementTree.parse(path).getroot()
    cases = {}
    for case in root.iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        cases[(case.get("classname"), case.get("name"))] = (kinds[0] if kinds else "passed", float(case.get("time")))
    return cases


def decorated_at(source, name):
    """Where pytest places test ``name`` of ``source``: the line of its first decorator."""
    lines = textwrap.dedent(source).splitlines()
    number = line_of(source, f"def {name}(")
    while lines[number - 2].startswith("@"):
        number -= 1
    return number


class TestInProcess(TestCase):
    def test_good_markers(self):
        self.assertEqual(parse_mark((2,), {}), WorldSizeMark((2,)))
        self.assertEqual(parse_mark(([2, 4],), {"timeout": 30, "ranks": "kept", "allow_cpu": True}),
                         WorldSizeMark((2, 4), 30.0, "kept", True))
        self.assertEqual(size_id(4), "4ranks")

    def test_a_marker_with_several_bad_arguments_names_each(self):
        with self.assertRaises(MarkError) as raised:
            parse_mark((0,), {"ranks": "x", "timeout": "soon", "allow_cpu": 1, "size": 2, "kind": 3})
        self.assertEqual(str(raised.exception), "; ".join([
            "world_size=0: expected a positive integer",
            "world_size(timeout=...)='soon': expected a positive number of seconds",
            "world_size(ranks='x'): expected one of 'fresh', 'kept', 'threads'",
            "world_size(allow_cpu=1): expected True or False",
            "world_size(..., kind=...): unknown argument; expected one of timeout, ranks, allow_cpu",
            "world_size(..., size=...): unknown argument; expected one of timeout, ranks, allow_cpu"]))

    def test_a_marker_is_parsed_once_in_a_session(self):
        # Collection, one test per size and the test's kind read the same parse: three places
        # parsed it (once per item) before.
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "test_marked.py").write_text(textwrap.dedent("""\
                import pytest

                @pytest.mark.world_size([2, 4], ranks="threads")
                def test_sizes(rank):
                    pass
            """))
            count = textwrap.dedent("""\
                import sys, pytest
                from torch_testing_ext._engine.pytest_native import world_size_mark
                parses = []
                class Counted(world_size_mark.WorldSizeMark):
                    def __init__(self, *args):
                        parses.append(args)
                        super().__init__(*args)
                world_size_mark.WorldSizeMark = Counted
                status = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", sys.argv[1]])
                print("parses:", len(parses), "status:", int(status))
            """)
            run = subprocess.run([sys.executable, "-c", count, str(Path(tmp, "test_marked.py"))], cwd=tmp,
                                 env=checkout_env(), capture_output=True, text=True, timeout=120)
        self.assertIn("test_sizes[2ranks]", run.stdout, run.stdout + run.stderr)
        self.assertIn("parses: 1 status: 0", run.stdout, run.stdout + run.stderr)

    def test_every_bad_argument_is_one_line_naming_it(self):
        cases = [
            (((0,), {}), "world_size=0: expected a positive integer"),
            ((([],), {}), "world_size([]): expected a positive integer or a list of them"),
            ((([2, 2],), {}), "world_size([2, 2]): a size is given twice"),
            ((("2",), {}), "world_size='2': expected a positive integer"),
            (((), {}), "world_size takes one size or a list of sizes, got 0 positional arguments"),
            (((2,), {"ranks": "x"}), "world_size(ranks='x'): expected one of 'fresh', 'kept', 'threads'"),
            (((2,), {"timeout": 0}), "world_size(timeout=...)=0: expected a positive number of seconds"),
            (((2,), {"allow_cpu": 1}), "world_size(allow_cpu=1): expected True or False"),
            (((2,), {"size": 2}), "world_size(..., size=...): unknown argument; expected one of timeout, ranks, "
                                  "allow_cpu"),
        ]
        for (args, kwargs), message in cases:
            with self.subTest(message), self.assertRaises(MarkError) as raised:
                parse_mark(args, kwargs)
            self.assertEqual(str(raised.exception), message)

    def test_a_rank_session_takes_the_plugins_and_overrides_but_no_reports(self):
        config = types.SimpleNamespace(
            rootpath=Path("/r"), inipath=Path("/r/pytest.ini"), option=types.SimpleNamespace(tbstyle="short"),
            pluginmanager=types.SimpleNamespace(
                list_plugin_distinfo=lambda: [(types.ModuleType("their_plugin"), None)]),
            invocation_params=types.SimpleNamespace(args=(
                "-p", "no:randomly", "-pmine", "-o", "a=1", "--junitxml=x.xml", "-k", "fast", "-n", "2",
                "tests/test_x.py", "-Werror")))
        options = session_options(config)
        self.assertEqual(options[options.index("--rootdir") + 1], "/r")
        self.assertEqual(options[options.index("-c") + 1], "/r/pytest.ini")
        pairs = list(zip(options, options[1:], strict=False))
        for kept in (["-p", "no:randomly"], ["-o", "a=1"], ["-p", "their_plugin"], ["-o", "addopts="]):
            with self.subTest(kept):
                self.assertIn(tuple(kept), pairs)
        for kept in ("-pmine", "-Werror", "--tb=short", "-s", "--disable-plugin-autoload"):
            with self.subTest(kept):
                self.assertIn(kept, options)
        for dropped in ("--junitxml=x.xml", "fast", "tests/test_x.py", "-n"):
            self.assertNotIn(dropped, options)

    def test_a_pytest_report_gives_the_headline_its_assertion(self):
        report = ("rank = 1\n\n    def test_x(rank):\n>       assert rank == 0\nE       assert 1 == 0\n\n"
                  "t.py:3: AssertionError")
        verdict = combine([RankOutcome(0, Status.PASSED), RankOutcome(1, Status.FAILED, report)])
        self.assertEqual(verdict.headline, "rank 1 failed: assert 1 == 0")

    def test_too_few_accelerators_skip_before_any_rank_unless_cpu_is_allowed(self):
        with pretend_accelerator("cuda", count=1):
            with self.assertRaises(pytest.skip.Exception) as raised:
                rank_facts_for(WorldSizeMark((2,)), 2, "/d")
            self.assertEqual(str(raised.exception.msg), "needs 2 CUDA devices, this machine has 1 "
                             "(world_size(..., allow_cpu=True) runs on CPU ranks instead)")
            fallback = rank_facts_for(WorldSizeMark((2,), allow_cpu=True), 2, "/d")
            self.assertEqual([(f.rank, f.device, f.backend) for f in fallback],
                             [(0, "cpu", "gloo"), (1, "cpu", "gloo")])
        with pretend_accelerator("cuda", count=2):
            self.assertEqual([f.device for f in rank_facts_for(WorldSizeMark((2,)), 2, "/d")], ["cuda:0", "cuda:1"])

    def test_a_launched_tests_own_keyboard_interrupt_is_no_stop_but_ctrl_c_is(self):
        if threading.current_thread() is not threading.main_thread():
            self.skipTest("signal handlers are set in the main thread only")
        before = signal.getsignal(signal.SIGINT)
        with InterruptListener() as listener:
            try:
                raise KeyboardInterrupt  # the test's own
            except KeyboardInterrupt as error:
                own = error
            self.assertFalse(listener.is_a_stop(own))
            self.assertTrue(listener.is_a_stop(Terminated("received signal SIGTERM")))
            with self.assertRaises(KeyboardInterrupt) as ctrl_c:
                signal.raise_signal(signal.SIGINT)
            self.assertTrue(listener.is_a_stop(ctrl_c.exception))
        self.assertIs(signal.getsignal(signal.SIGINT), before)
        # The launched run takes the test's own for its outcome.
        line = own.__traceback__.tb_lineno
        self.assertEqual(outcome_of(1, own).detail.splitlines()[0],
                         f"rank 1 left the test with KeyboardInterrupt at test_pytest_worlds.py:{line}")

    def test_pytests_runner_frames_are_the_harness_in_a_dump(self):
        self.assertTrue(is_harness_file(pytest.__file__.replace("pytest/__init__.py", "_pytest/runner.py")))
        self.assertFalse(is_harness_file(__file__))


def session_files():
    """The fixture files of the one pytest session: every file above but LAUNCHED (torchrun's),
    LEAVING on each kind of ranks with its stopping conftest, and a pytest.ini whose addopts
    only the test process may act on (a report file: every rank would write it)."""
    return {"pytest.ini": "[pytest]\naddopts = --junitxml=from-addopts.xml\n",
            "conftest.py": STOPPING_CONFTEST,
            "test_fresh.py": FRESH, "test_kept.py": KEPT, "test_threads.py": THREADS, "test_sized.py": KEPT_SIZES,
            "test_closed.py": CLOSED_STREAMS, "test_bad.py": BAD_MARKERS,
            **{f"test_leave_{ranks}.py": leaving_source(ranks) for ranks in ("fresh", "kept", "threads")}}


class NativeSession:
    """ONE ``python -m pytest`` run of every fixture file of ``session_files`` (one test
    process, one torch import and one fork server for them all), with a private TMPDIR and a
    marker in its environment (to find any process it left). Each test class reads its own
    file's tests from it: the JUnit XML that the addopts ask for, and pytest's output."""

    def __init__(self):
        self.pytest = PytestRun(session_files())
        self.tmp = Path(tempfile.mkdtemp(prefix="native-tmp-"))
        self.out = Path(tempfile.mkdtemp(prefix="native-out-"))
        self.marker = f"TTE_SELFTEST_{uuid.uuid4().hex}"
        self.result = self.pytest.run("-rfEsx", TMPDIR=str(self.tmp), SELFTEST_OUT=str(self.out),
                                      **{self.marker: "1"})
        self.output = self.result.stdout + self.result.stderr
        self.report = self.pytest.root / "from-addopts.xml"
        self.cases = junit_cases(self.report) if self.report.exists() else {}

    def statuses(self, module):
        """{test name: status} of the tests of ``module`` (its functions and its classes')."""
        return {name: status for (owner, name), (status, _) in self.cases.items()
                if owner == module or owner.startswith(f"{module}.")}

    def cleanup(self):
        self.pytest.cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.out, ignore_errors=True)


_SESSION: list[NativeSession] = []


def native_session():
    """The module's one session, run by the first test that reads it."""
    if not _SESSION:
        _SESSION.append(NativeSession())
    return _SESSION[0]


def tearDownModule():
    while _SESSION:
        _SESSION.pop().cleanup()


class PytestNativeRun(TestCase):
    """Tests that read the one session (``native_session``): its exit status and output, and
    the JUnit statuses of the tests of their fixture file ``module``."""

    module = ""

    @property
    def session(self):
        return native_session()

    @property
    def result(self):
        return self.session.result

    @property
    def output(self):
        return self.session.output

    @property
    def statuses(self):
        return self.session.statuses(self.module)


class TestOneSession(PytestNativeRun):
    """The session of every fixture file as a whole."""

    def test_the_test_process_fails_and_its_last_line_counts_every_files_tests(self):
        self.assertEqual(self.result.returncode, 1, self.output)
        # fresh: 3 failed, 5 passed, 2 skipped, 1 xfailed, 1 error; kept: 1 failed, 2 passed;
        # threads: 1 failed, 1 passed; sized: 4 passed; closed: 4 failed, 1 passed; bad markers:
        # 2 passed, 6 errors; leaving on fresh and kept: 7 failed, 2 passed, 1 skipped each, on
        # threads: 3 failed, 1 passed, 1 skipped
        self.assertRegex(self.result.stdout.splitlines()[-1],
                         r"^=+ 26 failed, 20 passed, 5 skipped, 1 xfailed, 7 errors in ", self.output)

    def test_nothing_is_left_behind(self):
        self.assertEqual(processes_with(self.session.marker), [])
        self.assertEqual(leftover_files(self.session.tmp), [])


class TestFreshRanks(PytestNativeRun):
    module = "test_fresh"

    def test_each_test_ends_as_its_ranks_say(self):
        self.assertEqual(self.statuses, {
            "test_all_reduce": "passed", "test_sizes[2ranks]": "passed", "test_sizes[3ranks]": "passed",
            "test_params[1]": "passed", "test_params[2]": "passed", "test_fails_on_rank_1": "failure",
            "test_skips": "skipped", "test_xfails": "skipped", "test_skipif": "skipped",
            "test_dies_on_rank_1": "failure", "test_hangs_on_rank_1": "failure",
            "test_rank_without_a_marker": "error"}, self.output)
        self.assertEqual(self.result.returncode, 1)

    def test_a_failure_on_rank_1_shows_its_assertion(self):
        section = failure_section(self.result.stdout, "test_fails_on_rank_1")
        self.assertEqual(section[:2], ["RankFailure: 1 of 2 ranks did not pass (rank 1)", "rank 1 failed:"])
        self.assertIn("[rank 1] >       assert value == 0", section)
        self.assertIn("[rank 1] E       assert 7 == 0", section)  # pytest's assertion rewriting, in the rank
        self.assertIn("FAILED test_fresh.py::test_fails_on_rank_1 - rank 1 failed: assert 7 == 0",
                      summary_lines(self.result.stdout))

    def test_skips_and_xfail_are_reported_at_the_test(self):
        summary = summary_lines(self.result.stdout)
        skips = decorated_at(FRESH, "test_skips"), decorated_at(FRESH, "test_skipif")
        self.assertIn(f"SKIPPED [1] test_fresh.py:{skips[0]}: nothing to do on this machine", summary)
        self.assertIn(f"SKIPPED [1] test_fresh.py:{skips[1]}: decided before the ranks", summary)
        self.assertFalse((self.session.out / "skipif-ran").exists(), "no rank runs a test a skip mark skips")
        self.assertIn("1 xfailed", self.result.stdout.splitlines()[-1])

    def test_a_crash_and_a_hang_name_the_rank(self):
        died = failure_section(self.result.stdout, "test_dies_on_rank_1")
        self.assertEqual(died[:3], ["RankError: 1 of 2 ranks did not pass (rank 1)", "rank 1 died:",
                                    "[rank 1] rank 1 exited with code 7 without reporting an outcome"])
        hung = failure_section(self.result.stdout, "test_hangs_on_rank_1")
        self.assertEqual(hung[:5], ["RankError: 1 of 2 ranks did not pass (rank 1)", "rank 1 timed out:",
                                    "[rank 1] timed out after 2 s; ranks still running: 1",
                                    "[rank 1] Stack of the test (most recent call last):",
                                    f'[rank 1]   File "{self.session.pytest.root / "test_fresh.py"}", '
                                    f'line {line_of(FRESH, "time.sleep(120)")}, in test_hangs_on_rank_1'])
        seconds = self.session.cases[("test_fresh", "test_hangs_on_rank_1")][1]
        self.assertLess(seconds, 60, "the marker's 2 s timeout ends the test")

    def test_a_rank_fixture_needs_the_marker(self):
        self.assertIn("the 'rank' fixture is for tests marked @pytest.mark.world_size(n) or "
                      "@pytest.mark.worlds(n, m, ...); test_fresh.py::test_rank_without_a_marker is not", self.output)


class TestKeptRanks(PytestNativeRun):
    module = "test_kept"

    def test_a_world_keeps_its_ranks_and_group_until_a_test_fails(self):
        self.assertEqual(self.statuses, {"test_a": "passed", "test_b": "failure", "test_c": "passed"}, self.output)
        section = failure_section(self.result.stdout, "TestKept.test_b")
        self.assertEqual(section[:2], ["RankFailure: 1 of 2 ranks did not pass (rank 1)", "rank 1 failed:"])


class TestThreadRanks(PytestNativeRun):
    module = "test_threads"

    def test_each_rank_thread_gets_its_own_fixtures(self):
        self.assertEqual(self.statuses, {"test_all_reduce_on_threads": "passed",
                                         "test_fails_on_thread_rank_1": "failure"}, self.output)
        self.assertIn("FAILED test_threads.py::test_fails_on_thread_rank_1 - rank 1 failed: Assertio...",
                      summary_lines(self.result.stdout))
        section = failure_section(self.result.stdout, "test_fails_on_thread_rank_1")
        self.assertIn("[rank 1] AssertionError: assert 1 != 1", section)


class TestLeavingTheTest(PytestNativeRun):
    """A rank passes only when its test returned (or skipped), on fresh, kept and thread ranks:
    leaving it by KeyboardInterrupt, pytest.exit() or sys.exit(0), in its body or its fixtures,
    fails the test in worlds.outcomes' words; a rank session stopped outside the test's phases
    never passes. Read from pytest's own verdict: exit status, summary lines, JUnit XML."""

    modules = [f"test_leave_{ranks}" for ranks in ("fresh", "kept", "threads")]

    def expected(self, ranks):
        """{test: (the reason its summary line gives, the first line of rank 1's part of its
        report)} for the file of ``ranks``."""
        expected = {test: (words, words) for test, words in
                    left_with(f"test_leave_{ranks}.py", fixtures=ranks != "threads").items()}
        if ranks == "threads":
            return expected
        if ranks == "fresh":
            before = ("rank 1 did not finish the test: its pytest session never tore it down (the test's phases "
                      "that ran: none)")
            after = ("rank 1 did not finish the test: its pytest session ended with exit status 2 (INTERRUPTED) "
                     "(the test's phases that ran: setup, call, teardown)")
            expected.update({"test_session_stops_before_the_test": (before, before),
                             "test_session_stops_after_the_test": (after, after)})
        else:  # a kept rank's session raises out of the test's protocol
            expected.update({
                "test_session_stops_before_the_test": (
                    "rank 1 raised KeyboardInterrupt", "rank 1's pytest session broke (the test's phases that ran: "
                                                       "none):"),
                "test_session_stops_after_the_test": (
                    "rank 1 raised KeyboardInterrupt", "rank 1's pytest session broke (the test's phases that ran: "
                                                       "setup, call, teardown):")})
        return expected

    def test_the_files_end_with_17_failed_5_passed_3_skipped(self):
        # fresh and kept: 7 failed, 2 passed, 1 skipped each; threads: 3 failed, 1 passed, 1 skipped
        # (and the session's last line counts them: TestOneSession)
        ended = [status for module in self.modules for status in self.session.statuses(module).values()]
        self.assertEqual({status: ended.count(status) for status in set(ended)},
                         {"failure": 17, "passed": 5, "skipped": 3}, self.output)

    def test_each_way_of_leaving_fails_its_test_naming_rank_what_and_where(self):
        cases = {case: status for case, (status, _) in self.session.cases.items()}
        summary = summary_lines(self.result.stdout)
        for ranks in ("fresh", "kept", "threads"):
            module = f"test_leave_{ranks}"
            for test, (reason, first_line) in self.expected(ranks).items():
                with self.subTest(ranks=ranks, test=test):
                    self.assertEqual(cases[(module, test)], "failure", self.output)
                    # The summary line names the rank first; pytest cuts it at 80 columns.
                    [line] = [line for line in summary if line.startswith(f"FAILED {module}.py::{test} - ")]
                    shown = line.split(" - ", 1)[1]
                    self.assertTrue(reason.startswith(shown.removesuffix("...")), (line, reason))
                    self.assertTrue(any(f"[rank 1] {first_line}" in section
                                        for section in failure_sections(self.result.stdout, test)), self.output)
            with self.subTest(ranks=ranks, test="a skip code, then passes"):
                self.assertEqual(cases[(module, "test_exits_with_a_skip_code")], "skipped")
                self.assertEqual(cases[(module, "test_passes_after_them")], "passed")
                if ranks != "threads":
                    self.assertEqual(cases[(module, "test_passes_at_the_end")], "passed")


def failure_sections(output, title):
    """Every section under FAILURES titled ``title`` (several files may have a test of that
    name), each as a list of lines."""
    lines = output.splitlines()
    sections = []
    for start in [i for i, line in enumerate(lines) if re.fullmatch(rf"_+ {re.escape(title)} _+", line)]:
        end = next(i for i in range(start + 1, len(lines)) if re.fullmatch(r"[_=]+ .* [_=]+", lines[i]))
        sections.append(lines[start + 1:end])
    return sections


CLOSED_STREAMS = '''
import os, sys
import pytest

@pytest.mark.world_size(2)
def test_closes_fds_1_and_2(rank):
    if rank == 1:
        os.close(1)
        os.close(2)
        assert rank == 0, "rank 1's own message after closing fds 1 and 2"

@pytest.mark.world_size(2)
def test_closes_sys_stdout(rank):
    if rank == 1:
        sys.stdout.close()
        assert rank == 0, "rank 1's own message after closing sys.stdout"

@pytest.mark.world_size(2)
def test_closes_sys_stderr(rank):
    if rank == 1:
        sys.stderr.close()
        assert rank == 0, "rank 1's own message after closing sys.stderr"

@pytest.mark.world_size(2, ranks="kept")
class TestKept:
    def test_closes_everything(self, rank):
        if rank == 1:
            sys.stdout.close()
            os.close(1)
            os.close(2)
            assert rank == 0, "rank 1's own message on a kept rank"

    def test_then_prints(self, rank):  # a kept rank's next test has its streams back
        print("the streams work again", flush=True)
        print("on stderr too", file=sys.stderr, flush=True)
'''


class TestClosedStreams(PytestNativeRun):
    """A rank's test that closes its stdout and stderr still reports its own failure (pytest's
    terminal in the rank's session writes elsewhere), and a kept rank's next test has them back."""

    module = "test_closed"

    def test_the_tests_own_assertion_is_reported(self):
        self.assertEqual(self.result.returncode, 1, self.output)
        self.assertEqual(self.statuses, {"test_closes_fds_1_and_2": "failure", "test_closes_sys_stdout": "failure",
                                         "test_closes_sys_stderr": "failure", "test_closes_everything": "failure",
                                         "test_then_prints": "passed"}, self.output)
        summary = summary_lines(self.result.stdout)
        for title, what in [("test_closes_fds_1_and_2", "after closing fds 1 and 2"),
                            ("test_closes_sys_stdout", "after closing sys.stdout"),
                            ("test_closes_sys_stderr", "after closing sys.stderr"),
                            ("TestKept.test_closes_everything", "on a kept rank")]:
            with self.subTest(title):
                section = failure_section(self.result.stdout, title)
                self.assertEqual(section[:2], ["RankFailure: 1 of 2 ranks did not pass (rank 1)", "rank 1 failed:"])
                own = [line for line in section if line.startswith("[rank 1] E ")]
                self.assertEqual(own[0].split(None, 3)[3], f"AssertionError: rank 1's own message {what}", section)
                nodeid = title.replace(".", "::")
                [line] = [line for line in summary if line.startswith(f"FAILED test_closed.py::{nodeid} - ")]
                headline = f"rank 1 failed: AssertionError: rank 1's own message {what}"
                self.assertTrue(headline.startswith(line.split(" - ", 1)[1].removesuffix("...")), line)
        self.assertNotIn("Bad file descriptor", self.output)
        self.assertNotIn("I/O operation on closed file", self.output)


REUSED_DESCRIPTOR = """
import os, sys
from torch_testing_ext._engine.pytest_native.rank_streams import reopen_closed_streams
log = open(sys.argv[1], "a", buffering=1)
os.dup2(log.fileno(), 1)
os.close(1)
data = open(sys.argv[2], "w")  # the test's own file, on the number 1 it closed
assert data.fileno() == 1, data.fileno()
data.write("the test's data")
data.flush()
reopen_closed_streams(log)
print("the rank's later output", flush=True)
"""


class TestReopenedStreams(TestCase):
    def test_a_descriptor_number_reused_for_the_tests_own_file_goes_back_to_the_log(self):
        with tempfile.TemporaryDirectory() as directory:
            log, data = os.path.join(directory, "log"), os.path.join(directory, "data")
            run = subprocess.run([sys.executable, "-c", REUSED_DESCRIPTOR, log, data], env=checkout_env(),
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(log) as written:
                self.assertEqual(written.read(), "the rank's later output\n")
            with open(data) as written:
                self.assertEqual(written.read(), "the test's data")


class TestProjectSettings(PytestNativeRun):
    module = "test_sized"

    def test_addopts_are_the_test_processs_and_kept_sizes_keep_their_worlds(self):
        # addopts that only the test process may act on (a report file: every rank would write
        # it): the session's JUnit XML is the addopts' (no --junitxml on its command line); a kept
        # class with two sizes runs all tests of one size on one world.
        self.assertTrue(self.session.report.exists(), self.output)
        self.assertEqual(self.statuses, {"test_a[2ranks]": "passed", "test_b[2ranks]": "passed",
                                         "test_a[3ranks]": "passed", "test_b[3ranks]": "passed"}, self.output)


class TestBadMarkers(PytestNativeRun):
    module = "test_bad"

    def test_a_bad_marker_is_a_one_line_error_of_its_own_test(self):
        # every test of the file ran: 2 passed, 6 errors
        self.assertEqual(self.statuses, {"test_zero": "error", "test_not_a_size": "error", "test_timeout": "error",
                                         "test_three_bad_arguments": "error", "test_good": "passed",
                                         "test_a": "error", "test_b": "error", "test_good_on_ranks": "passed"},
                         self.output)
        summary = summary_lines(self.result.stdout)
        for title, message in BAD.items():
            with self.subTest(title):
                self.assertEqual(failure_section(self.result.stdout, f"ERROR at setup of {title}"), [message])
                nodeid = "test_bad.py::" + title.replace(".", "::")
                [line] = [line for line in summary if line.startswith(f"ERROR {nodeid} - ")]
                self.assertTrue(f"Failed: {message}".startswith(line.split(" - ", 1)[1].removesuffix("...")), line)

    def test_the_files_other_tests_run_alone(self):
        run = PytestRun({"test_bad.py": BAD_MARKERS})
        self.addCleanup(run.cleanup)
        result = run.run("test_bad.py::test_good", "test_bad.py::test_good_on_ranks")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertRegex(result.stdout.splitlines()[-1], r"^=+ 2 passed in ")


class TestWithOtherRunners(TestCase):
    def test_xdist_and_the_driver(self):
        # The passing tests of FRESH and THREADS, in one file: the driver starts a process per file.
        run = PytestRun({"test_passing.py": FRESH.split("@pytest.mark.world_size(2)\ndef test_fails_on_rank_1")[0]
                         + THREADS.split("@pytest.mark.world_size(2, ranks=\"threads\")")[0]})
        self.addCleanup(run.cleanup)
        result = run.run("-n", "2", "-q")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("6 passed", result.stdout.splitlines()[-1])
        driver = subprocess.run([sys.executable, "-m", "torch_testing_ext.run_test", "."], cwd=run.root,
                                env=checkout_env(), capture_output=True, text=True, timeout=300)
        self.assertEqual(driver.returncode, 0, driver.stdout + driver.stderr)
        self.assertIn("summary: 6 passed, 0 failed, 0 skipped", driver.stdout)

    def test_torchrun_runs_each_test_as_the_launched_rank(self):
        # LEAVING's tests too: under a launcher every test runs as the launched rank, whatever
        # its marker's ranks=, and leaving it early fails it (a fixture's teardown runs after
        # the ranks' verdict: an error of that rank's test). Each rank's output to its own file.
        run = PytestRun({"test_launched.py": LAUNCHED, "test_leave_launched.py": leaving_source("fresh")})
        self.addCleanup(run.cleanup)
        logs = run.root / "logs"
        launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                    "--redirects", "3", "--log-dir", str(logs), "-m", "pytest", "-p", "no:cacheprovider",
                    "-p", "no:hypothesispytest", "-p", "no:benchmark", "-q", "-rfE"]
        result = subprocess.run(launcher, cwd=run.root, env=checkout_env(OMP_NUM_THREADS="1"),
                                capture_output=True, text=True, timeout=300)
        self.assertNotEqual(result.returncode, 0, result.stdout + result.stderr)
        outputs = {rank: launched_output(logs, rank) for rank in (0, 1)}
        name = "test_leave_launched.py"
        left = left_with(name)
        teardown = left.pop("test_exits_in_teardown")
        for rank, output in outputs.items():
            with self.subTest(rank=rank):
                summary = summary_lines(output)
                # every rank reports the verdict of all
                self.assertTrue(any(line.startswith("FAILED test_launched.py::test_fails_on_rank_1 - rank 1 failed: ")
                                    for line in summary), output)
                for test, words in left.items():
                    [line] = [line for line in summary if line.startswith(f"FAILED {name}::{test} - ")]
                    self.assertTrue(words.startswith(line.split(" - ", 1)[1].removesuffix("...")), line)
                errors = [line for line in summary if line.startswith("ERROR ")]
                if rank == 1:  # the teardown after the verdict: this rank's own
                    [error] = errors
                    self.assertTrue(error.startswith(f"ERROR {name}::test_exits_in_teardown - rank 1 left the test"),
                                    error)
                    self.assertIn(teardown, output)
                    self.assertRegex(output.splitlines()[-1], r"^5 failed, 6 passed, 1 skipped, 1 error in ")
                else:
                    self.assertEqual(errors, [])
                    self.assertRegex(output.splitlines()[-1], r"^5 failed, 6 passed, 1 skipped in ")


def launched_output(log_dir, rank):
    """What local rank ``rank`` of a torchrun with ``--redirects 3 --log-dir log_dir`` wrote to stdout."""
    [path] = log_dir.glob(f"*/attempt_0/{rank}/stdout.log")
    return path.read_text()
