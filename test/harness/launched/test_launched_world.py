"""Self-tests of launcher mode: under ``torchrun`` each rank process runs the tests itself.

The end-to-end tests start ``torchrun`` on ``fixtures/launched_cases.py`` as a marked run
(``process_tree.marked_run``: its own TMPDIR, every process it starts watched in ``/proc``),
with each rank's stdout and stderr in files (``--log-dir``, ``--redirects 3``), and check what
each rank reported, the JUnit XML of each rank, and that no process and no temporary file is
left. One ``torchrun`` costs several seconds (an agent and its ranks importing torch), so each
job serves every check of its kind: one job of two one-rank "nodes" on loopback runs every
class that ends on its own (fresh, kept, FSDP and DTensor classes that pass, fail, error and
skip) and each test reads its part; ``torchrun --standalone`` runs the hanging class and the
pytest run, and two processes given the five variables stand for any other launcher: these
four jobs go at once, and each test reads its job's end. The unit
tests check the environment parsing, ``run_tests``' error on a bad variable and the reporting
helpers without a launcher.
"""

import contextlib
import glob
import io
import os
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from unittest import mock

import torch.distributed as dist

from torch_testing_ext._engine.launched import launched_run, launcher_env
from torch_testing_ext._engine.launched.launched_reports import rank_report_path, summary_stream
from torch_testing_ext._engine.launched.launcher_env import LaunchedRank, launched_rank
from torch_testing_ext._engine.launched.outcome_exchange import OutcomeExchange, decode_outcome, encode_outcome
from torch_testing_ext._engine.process_groups.ports import find_free_port
from torch_testing_ext._engine.process_tree.marked_run import MarkedRun, watch_all
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.worlds.outcomes import RankOutcome, combine
from torch_testing_ext._engine.worlds.rank_facts import RankFacts, enter_rank, leave_rank, rank_device_index
from torch_testing_ext._engine.worlds.settings import SettingError
from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures import launched_cases
from fixtures.paths import FIXTURES

FIXTURE = str(FIXTURES / "launched_cases.py")
STEM = "launched_cases"
RUN_TIMEOUT = 240  # seconds one torchrun invocation may take on a loaded 2-core machine
HANG_TIMEOUT = 3  # the per-test timeout of the hanging test
GOOD_ENV = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29500"}


class Torchrun:
    """``torchrun *launcher_args fixture *fixture_args`` as a marked run in a directory of its
    own (removed by ``cleanup``); each rank's output in files, JUnit XML in ``xml_dir``."""

    def __init__(self, launcher_args, fixture_args, pytest=False, **env):
        self.dir = tempfile.mkdtemp(prefix="tte-launcher-selftest-")
        self.log_dir = os.path.join(self.dir, "logs")
        self.xml_dir = os.path.join(self.dir, "xml")
        target = ["-m", "pytest", "-p", "no:cacheprovider", FIXTURE] if pytest else [FIXTURE]
        self.run = MarkedRun("-m", "torch.distributed.run", *launcher_args, "--log-dir", self.log_dir,
                             "--redirects", "3", *target, *fixture_args, cwd=self.dir, **env)

    def cleanup(self):
        self.run.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def rank_output(self, local_rank, stream):
        """What local rank ``local_rank`` wrote to ``stream`` ("stdout" or "stderr")."""
        paths = glob.glob(os.path.join(self.log_dir, "*", "attempt_0", str(local_rank), f"{stream}.log"))
        if len(paths) != 1:
            raise AssertionError(f"expected one {stream} log of local rank {local_rank}, found {paths}")
        with open(paths[0]) as log:
            return log.read()

    def xml_cases(self, name):
        """{"Class.test_name": (tag of its outcome or None, message)} of one JUnit XML file."""
        root = ET.parse(os.path.join(self.xml_dir, name)).getroot()
        cases = {}
        for case in root.iter("testcase"):
            child = next(iter(case), None)
            test = f"{case.get('classname').rsplit('.', 1)[-1]}.{case.get('name')}"
            cases[test] = (None, "") if child is None else (child.tag, child.get("message", ""))
        return cases


def standalone(fixture_args, pytest=False, **env):
    """A ``torchrun --standalone --nproc-per-node 2`` job, started (``cleanup`` when done)."""
    return Torchrun(["--standalone", "--nproc-per-node", "2"], fixture_args, pytest=pytest, **env)


class TestTwoNodes(TestCase):
    """One job, every class of the fixture that ends on its own: two torchruns, each a one-rank
    "node" on loopback (each with its own agent, directory and JUnit XML), started at once."""

    CLASSES = ["Launched", "NeedsFour", "OneRank", "KeptWorld"]  # -k patterns (Launched* and KeptWorld*)
    PASSING = ["Launched.test_passes_with_a_file_rendezvous", "Launched.test_passes_with_two_store_rendezvous",
               "OneRank.test_runs_on_rank_0_alone", "LaunchedBases.test_distributed_test_base",
               "LaunchedFSDP.test_fully_shard", "LaunchedDTensor.test_shard",
               "KeptWorld.test_a_has_the_class_group", "KeptWorld.test_c_runs_after_a_failure",
               "KeptWorldFSDP.test_fully_shard", "KeptWorldDTensor.test_shard"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        port = str(find_free_port())
        patterns = [arg for name in cls.CLASSES for arg in ("-k", name)]
        cls.nodes = []
        for node in (0, 1):
            cls.nodes.append(Torchrun(["--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "1",
                                       "--master-addr", "127.0.0.1", "--master-port", port],
                                      ["-v", "--save-xml", "xml", *patterns]))
            cls.addClassCleanup(cls.nodes[-1].cleanup)
        cls.ended = watch_all([node.run for node in cls.nodes], timeout=RUN_TIMEOUT)
        # Only rank 0 writes its summary to stdout; rank 1 (node 1's only rank) writes the same
        # to stderr.
        cls.summaries = [cls.nodes[0].rank_output(0, "stdout"), cls.nodes[1].rank_output(0, "stderr")]

    def test_each_node_ends_failed_and_leaves_nothing(self):
        for node, (code, console, left) in zip(self.nodes, self.ended, strict=True):
            self.assertEqual(code, 1, console)  # tests failed, on both nodes
            self.assertGreaterEqual(len(node.run.seen), 2, "torchrun and its rank were seen")
            self.assertEqual(left, [], "processes left after torchrun ended")
            self.assertEqual(os.listdir(node.run.tmpdir), [], "the run left temporary files")

    def test_each_rank_reports_every_test_on_its_own_stream(self):
        self.assertEqual(self.nodes[0].rank_output(0, "stderr"), "")
        self.assertEqual(self.nodes[1].rank_output(0, "stdout"), "")
        for output in self.summaries:
            self.assertIn("Ran 18 tests", output)
            self.assertIn("FAILED (failures=2, errors=3, skipped=3)", output)
            for passing in self.PASSING:
                cls, name = passing.split(".")
                self.assertRegex(output, rf"{name} \(__main__\.{cls}\.{name}\) \.\.\. ok")

    def test_a_failure_or_error_on_rank_1_fails_the_test_on_both_ranks(self):
        for output in self.summaries:
            # A failure on rank 1 alone fails the test on both ranks, naming rank 1.
            self.assertIn("RankFailure: 1 of 2 ranks did not pass (rank 1)", output)
            self.assertIn("AssertionError: only rank 0 may pass", output)
            # An error on rank 1 makes rank 0's pending collective raise: rank 0 "stopped".
            self.assertIn("RankError: 1 of 2 ranks did not pass (rank 1)", output)
            self.assertIn("ValueError: rank one raised on purpose", output)
            self.assertIn("rank 0 stopped early because another rank had failed", output)
            # A rank that leaves its test early fails it, and the run goes on.
            self.assertIn("rank 1 left the test with sys.exit(0) at launched_cases.py:", output)
            self.assertIn("rank 1 left the test with KeyboardInterrupt at launched_cases.py:", output)

    def test_a_test_that_needs_more_ranks_than_launched_skips_naming_both(self):
        for output in self.summaries:
            self.assertIn("skipped 'NeedsFour needs 4 ranks; the launcher started 2 (WORLD_SIZE=2)'", output)
            self.assertIn("skipped 'Need at least 4 ranks: the launcher started 2 ranks "
                          "(WORLD_SIZE=2)'", output)
            self.assertIn("skipped 'skipped inside every rank'", output)

    def test_each_rank_writes_its_junit_xml_with_the_same_verdicts(self):
        # TEST-x.xml from rank 0, TEST-x-rank1.xml from rank 1 (each node in its own directory).
        self.assertEqual(os.listdir(self.nodes[0].xml_dir), [f"TEST-{STEM}.xml"])
        self.assertEqual(os.listdir(self.nodes[1].xml_dir), [f"TEST-{STEM}-rank1.xml"])
        rank0 = self.nodes[0].xml_cases(f"TEST-{STEM}.xml")
        rank1 = self.nodes[1].xml_cases(f"TEST-{STEM}-rank1.xml")
        self.assertEqual(len(rank0), 18)
        self.assertEqual(rank0, rank1)
        self.assertEqual(rank0["Launched.test_fails_on_rank_1"], ("failure", "1 of 2 ranks did not pass (rank 1)"))
        self.assertEqual(rank0["Launched.test_raises_on_rank_1_in_a_collective"][0], "error")
        self.assertEqual(rank0["LaunchedDTensor.test_shard"], (None, ""))

    def test_kept_rank_classes_run_on_the_launched_ranks(self):
        rank0 = self.nodes[0].xml_cases(f"TEST-{STEM}.xml")
        self.assertEqual({test: verdict for test, verdict in rank0.items() if test.startswith("KeptWorld")}, {
            "KeptWorld.test_a_has_the_class_group": (None, ""),
            "KeptWorld.test_b_fails_on_rank_1": ("failure", "1 of 2 ranks did not pass (rank 1)"),
            "KeptWorld.test_c_runs_after_a_failure": (None, ""),
            "KeptWorldFSDP.test_fully_shard": (None, ""),
            "KeptWorldDTensor.test_shard": (None, ""),
        })


class TestStandaloneAndPlainLauncher(TestCase):
    """Three jobs started at once: ``torchrun --standalone`` on the hanging class, the same under
    pytest, and two processes given the five variables (any other launcher); each test reads
    its job's end."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hang = standalone(["Hangs", "-v", "--save-xml", "xml"], FIXTURE_TIMEOUT=str(HANG_TIMEOUT))
        cls.addClassCleanup(cls.hang.cleanup)
        cls.pytest = standalone(["-p", "torch_testing_ext.launcher.pytest_ranks", "--junitxml=xml/report.xml",
                                 "-k", "test_passes_with_a_file_rendezvous or test_fails_on_rank_1"], pytest=True)
        cls.addClassCleanup(cls.pytest.cleanup)
        # Any launcher: no torchrun agent, so rank 0 hosts the store at MASTER_ADDR:MASTER_PORT.
        env = {"WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(find_free_port())}
        cls.plain = [MarkedRun(FIXTURE, "-k", "test_passes", "-k", "test_fails_on_rank_1",
                               RANK=str(rank), LOCAL_RANK=str(rank), **env) for rank in (0, 1)]
        for run in cls.plain:
            cls.addClassCleanup(run.close)
        runs = [cls.hang.run, cls.pytest.run, *cls.plain]
        cls.ended = dict(zip(runs, watch_all(runs, timeout=RUN_TIMEOUT), strict=True))

    def torchrun_ended(self, job):
        """The torchrun job's exit status and console output, checked to have left nothing."""
        code, console, left = self.ended[job.run]
        self.assertGreaterEqual(len(job.run.seen), 3, "torchrun and its two ranks were seen")
        self.assertEqual(left, [], "processes left after torchrun ended")
        self.assertEqual(os.listdir(job.run.tmpdir), [], "the run left temporary files")
        return code, console

    def test_a_hanging_rank_ends_the_job_with_its_stack_and_a_non_zero_exit(self):
        # Without the rank's own timeout the job would hang until RUN_TIMEOUT, and fail.
        run = self.hang
        code, console = self.torchrun_ended(run)
        self.assertNotEqual(code, 0, console)
        self.assertIn("exitcode  : 124", console)  # torchrun names the rank that timed out

        stderr1 = run.rank_output(1, "stderr")
        self.assertIn(f"Hangs.test_hangs_on_rank_1: rank 1 timed out after {HANG_TIMEOUT} s; the stacks "
                      "of this process's threads follow, then it exits with status 124", stderr1)
        self.assertRegex(stderr1, r'File ".*launched_cases.py", line \d+ in test_hangs_on_rank_1')

        # Each rank's XML keeps what it reported: rank 1's is written before it exits, rank
        # 0's when the launcher stops it; both name rank 1 as timed out.
        self.assertEqual(sorted(os.listdir(run.xml_dir)), [f"TEST-{STEM}-rank1.xml", f"TEST-{STEM}.xml"])
        rank0, rank1 = run.xml_cases(f"TEST-{STEM}.xml"), run.xml_cases(f"TEST-{STEM}-rank1.xml")
        self.assertEqual(rank0["Hangs.test_a_passes"], (None, ""))
        self.assertEqual(rank1["Hangs.test_a_passes"], (None, ""))
        self.assertEqual(rank0["Hangs.test_hangs_on_rank_1"], ("error", "1 of 2 ranks did not pass (rank 1)"))
        self.assertEqual(rank1["Hangs.test_hangs_on_rank_1"][0], "error")
        self.assertIn(f"rank 1 timed out after {HANG_TIMEOUT} s", rank1["Hangs.test_hangs_on_rank_1"][1])
        self.assertNotIn("Hangs.test_z_is_not_reached", rank1)
        # Rank 0 shows rank 1's stack from the test's frame on (no harness or unittest frames).
        self.assertRegex(run.rank_output(0, "stdout"),
                         rf"rank 1 timed out:\n\[rank 1\] rank 1 timed out after {HANG_TIMEOUT} s; its "
                         r'stack:\n\[rank 1\]   File ".*launched_cases.py", line \d+, in test_hangs_on_rank_1')

    def test_under_pytest(self):
        run = self.pytest
        code, console = self.torchrun_ended(run)
        self.assertNotEqual(code, 0, console)
        for rank in (0, 1):
            output = run.rank_output(rank, "stdout")
            self.assertIn("1 failed, 1 passed", output)
            self.assertIn("RankFailure: 1 of 2 ranks did not pass (rank 1)", output)
        self.assertEqual(sorted(os.listdir(run.xml_dir)), ["report-rank1.xml", "report.xml"])
        self.assertEqual(run.xml_cases("report.xml"), run.xml_cases("report-rank1.xml"))

    def test_two_processes_given_the_five_variables(self):
        for run in self.plain:
            code, output, left = self.ended[run]
            self.assertEqual(code, 1, output)
            self.assertIn("Ran 3 tests", output)
            self.assertIn("FAILED (failures=1)", output)
            self.assertIn("RankFailure: 1 of 2 ranks did not pass (rank 1)", output)
            self.assertEqual(left, [], "processes left after the rank ended")
            self.assertEqual(os.listdir(run.tmpdir), [], "the rank left temporary files")


class TestLaunchedRank(TestCase):
    def test_no_rank_no_launcher(self):
        self.assertIsNone(launched_rank({}))
        self.assertIsNone(launched_rank({"MASTER_ADDR": "localhost", "MASTER_PORT": "1234",
                                         "WORLD_SIZE": "2"}))

    def test_a_launched_rank(self):
        self.assertEqual(launched_rank(GOOD_ENV), LaunchedRank(1, 2, 1, "127.0.0.1", 29500))
        agent = launched_rank({**GOOD_ENV, "TORCHELASTIC_USE_AGENT_STORE": "True",
                               "TORCHELASTIC_RESTART_COUNT": "2"})
        self.assertEqual((agent.agent_store, agent.restart_count), (True, 2))

    def test_bad_values_name_the_variable(self):
        cases = [
            ("RANK", "abc", "RANK='abc': expected a non-negative integer"),
            ("RANK", "-1", "RANK='-1': expected a non-negative integer"),
            ("RANK", "2", "RANK='2': expected less than WORLD_SIZE=2"),
            ("WORLD_SIZE", "0", "WORLD_SIZE='0': expected a positive integer"),
            ("WORLD_SIZE", "two", "WORLD_SIZE='two': expected a positive integer"),
            ("LOCAL_RANK", "x", "LOCAL_RANK='x': expected a non-negative integer"),
            ("MASTER_PORT", "70000", "MASTER_PORT='70000': expected a port number from 1 to 65535"),
            ("MASTER_PORT", "http", "MASTER_PORT='http': expected a port number from 1 to 65535"),
            ("MASTER_ADDR", "a b", "MASTER_ADDR='a b': expected a host name or address"),
            ("TORCHELASTIC_RESTART_COUNT", "-2",
             "TORCHELASTIC_RESTART_COUNT='-2': expected a non-negative integer"),
        ]
        for name, value, message in cases:
            with self.subTest(name=name, value=value):
                with self.assertRaises(SettingError) as caught:
                    launched_rank({**GOOD_ENV, name: value})
                self.assertEqual(str(caught.exception), message)

    def test_a_missing_variable_is_named(self):
        for name in ("WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
            with self.subTest(name=name):
                env = {k: v for k, v in GOOD_ENV.items() if k != name}
                with self.assertRaisesRegex(SettingError, f"^{name} is not set: a launcher that sets "
                                                          "RANK must also set WORLD_SIZE, LOCAL_RANK"):
                    launched_rank(env)

    def test_never_inside_a_rank_of_the_harness(self):
        enter_rank(RankFacts(0, 2, "cpu", "gloo", "/nonexistent"))
        try:
            self.assertIsNone(launched_rank(GOOD_ENV))
        finally:
            leave_rank()
        self.assertIsNotNone(launched_rank(GOOD_ENV))

    def test_run_tests_stops_at_a_bad_value_with_one_line_and_exit_2(self):
        # As a launcher would start the file: the variables as they were at import, checked
        # before anything runs. (That a bad setting ends a file with exit status 2 is
        # test_settings' whole-file test.)
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(launcher_env._READ_AT_IMPORT, {**GOOD_ENV, "RANK": "one"}, clear=True), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                self.assertRaises(SystemExit) as exited:
            run_tests(["--list"], module=launched_cases)
        self.assertEqual(exited.exception.code, 2, err.getvalue())
        self.assertEqual(out.getvalue(), "")
        self.assertEqual(err.getvalue(), f"{STEM}.py: error: RANK='one': expected a non-negative integer\n")


class TestOutcomeExchange(TestCase):
    def test_a_rank_that_does_not_report_in_time_is_named_as_timed_out(self):
        exchange = OutcomeExchange(dist.HashStore(), "__main__.T.test_x/run-0")
        exchange.publish(RankOutcome(0, Status.PASSED))
        outcomes, absent = exchange.collect([0, 1], time.monotonic() + 0.2, waited=0.2)
        self.assertEqual(absent, [1])
        self.assertEqual(outcomes, [RankOutcome(0, Status.PASSED), RankOutcome(
            1, Status.TIMED_OUT, "rank 1 did not report an outcome within 0.2 s (still running, or gone)")])
        self.assertEqual(combine(outcomes).message.splitlines()[:2],
                         ["1 of 2 ranks did not pass (rank 1)", "rank 1 timed out:"])

    def test_done_counts_the_ranks(self):
        exchange = OutcomeExchange(dist.HashStore(), "k")
        exchange.mark_done()
        self.assertFalse(exchange.wait_until_done(2, time.monotonic() + 0.1))
        exchange.mark_done()
        self.assertTrue(exchange.wait_until_done(2, time.monotonic() + 0.1))


class TestLaunchedTestDirectory(TestCase):
    def test_a_rank_that_cannot_see_rank_0s_directory_makes_its_own_and_removes_it(self):
        store = dist.HashStore()  # the launcher's store, as rank 1 would see it
        with mock.patch.object(launched_run, "launcher_store", return_value=store):
            run = launched_run.LaunchedTest(self, LaunchedRank(1, 2, 1, "localhost", 1))
            run.exchange.publish_test_dir("/nonexistent/on-this-machine")  # rank 0's, elsewhere
            run.begin(timeout=1.0)
            private = run.test_dir
            self.assertTrue(os.path.isdir(private))
            self.assertNotEqual(private, "/nonexistent/on-this-machine")
            run.end()
        self.assertFalse(os.path.exists(private))
        self.assertTrue(run.exchange.wait_until_done(1, time.monotonic()))  # it said it is done


class TestLaunchedReporting(TestCase):
    RANK0 = LaunchedRank(0, 2, 0, "localhost", 1)
    RANK1 = LaunchedRank(1, 2, 1, "localhost", 1)

    def test_summary_streams(self):
        self.assertIs(summary_stream(None), sys.stderr)
        self.assertIs(summary_stream(self.RANK0), sys.stdout)
        self.assertIs(summary_stream(self.RANK1), sys.stderr)

    def test_report_paths(self):
        self.assertEqual(rank_report_path("r/TEST-x.xml", None), "r/TEST-x.xml")
        self.assertEqual(rank_report_path("r/TEST-x.xml", self.RANK0), "r/TEST-x.xml")
        self.assertEqual(rank_report_path("r/TEST-x.xml", self.RANK1), "r/TEST-x-rank1.xml")

    def test_outcomes_travel_as_json(self):
        outcome = RankOutcome(3, Status.TIMED_OUT, "rank 3 timed out\n  File ...", "tail")
        self.assertEqual(decode_outcome(encode_outcome(outcome)), outcome)

    def test_device_index_is_the_launched_local_rank(self):
        self.assertEqual(rank_device_index(5), 5)
        enter_rank(RankFacts(5, 8, "cuda:1", "nccl", "/nonexistent", "tte-launcher://store/t"))
        try:
            self.assertEqual(rank_device_index(5), 1)
            self.assertEqual(rank_device_index(4), 4)  # another rank: its own number
        finally:
            leave_rank()
