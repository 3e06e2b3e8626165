"""The collective ledger: where ranks' calls differ, lockstep, and injected faults.

In process (torch-free data): the first divergence over groups, point-to-point and faulted calls
left out, the report's lines, lockstep in the verdict and its opt-out, a stopped rank's
current line, a ledger file cut off mid-line, and ``inject_fault``'s one-line errors. Then real
ranks (``fixtures/ledger_cases.py``): a rank that skips a barrier (the report names the call,
both ops and lines, within the test's timeout), mismatched shapes (both shown), a mismatch the
backend completed (lockstep fails the test), DTensor's redistribution recorded on the functional
path, each fault action, a fault that never fires, kept ranks and thread ranks; and a pytest
test on ranks.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

from torch_testing_ext._engine.fresh import supervisor
from torch_testing_ext._engine.ledger.collective_ledger import Call, Ledger, LedgerLog, ledger_files, read_ledger_file
from torch_testing_ext._engine.ledger.ledger_report import divergence_report, first_divergence
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.worlds.outcomes import RankOutcome, combine
from torch_testing_ext.collectives import inject_fault
from torch_testing_ext.common_utils import TestCase

from fixtures import ledger_cases
from fixtures.pytest_runs import PytestRun, failure_section
from fixtures.runs import assert_outcomes, checkout_env, run_case, run_file

SOURCE = open(ledger_cases.__file__).read().splitlines()
INVISIBLE = os.path.join(os.path.dirname(ledger_cases.__file__), "ledger_invisible.py")

LAUNCHED = """import torch
import torch.distributed as dist
from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import run_tests
class TestLaunched(MultiProcessTestCase):
    world_size = 2
    timeout = 3
    def test_a_same_numel(self):
        dist.init_process_group("gloo", init_method=f"file://{self.file_name}", rank=self.rank, world_size=2)
        dist.all_reduce(torch.ones(4) if self.rank == 0 else torch.ones(2, 2))
    def test_b_skips_a_barrier(self):
        dist.init_process_group("gloo", init_method=f"file://{self.file_name}", rank=self.rank, world_size=2)
        if self.rank == 0:
            dist.barrier()
        dist.barrier()
if __name__ == "__main__":
    run_tests()
"""


def at(comment):
    """``ledger_cases.py:N`` of the line that ends with ``# comment``."""
    number = next(n for n, line in enumerate(SOURCE, 1) if line.rstrip().endswith(f"# {comment}"))
    return f"ledger_cases.py:{number}"


def call(seq, op="all_reduce", tensors="float32[4]", group="0", ranks=(0, 1), site="t.py:1", **kw):
    return Call(seq, op, group, ranks, tensors, site, **kw)


def ledger(rank, *calls, lockstep=True):
    return Ledger(rank, list(calls), lockstep)


def failure_text(result):
    problems = result.failures + result.errors
    assert len(problems) == 1, problems
    return problems[0][1]


def report_of(text):
    """The ledger section of a failure's message: from its first line to the end."""
    start = text.index("collective calls first differ") if "collective calls first differ" in text \
        else text.index("last calls:")
    return text[start:].rstrip().splitlines()


class TestLedgerData(TestCase):
    def test_the_first_divergence_over_groups(self):
        same = {0: ledger(0, call(1), call(2, "barrier", "")), 1: ledger(1, call(1), call(2, "barrier", ""))}
        self.assertIsNone(first_divergence(same))
        other = {0: ledger(0, call(1), call(2, "barrier", "")), 1: ledger(1, call(1), call(2, tensors="float32[2]"))}
        found = first_divergence(other)
        self.assertEqual((found.group, found.seq, found.calls[0].op, found.calls[1].tensors),
                         ("0", 2, "barrier", "float32[2]"))
        # A sub-group's calls are compared among its members only (rank 2 is not one, and makes
        # none); over groups, the lowest call number at which one differs wins.
        world, sub = (0, 1, 2), (0, 1)
        ledgers3 = {0: ledger(0, call(1, ranks=world), call(1, group="1", ranks=sub), call(2, ranks=world),
                              call(2, group="1", ranks=sub)),
                    1: ledger(1, call(1, ranks=world), call(1, group="1", ranks=sub), call(2, ranks=world),
                              call(2, "barrier", "", group="1", ranks=sub)),
                    2: ledger(2, call(1, ranks=world), call(2, "barrier", "", ranks=world))}
        found = first_divergence(ledgers3)
        self.assertEqual((found.group, found.seq, sorted(found.calls)), ("0", 2, [0, 1, 2]))
        del ledgers3[2]  # without rank 2, group 0 agrees; group 1 differs at its call 2
        found = first_divergence(ledgers3)
        self.assertEqual((found.group, found.seq, sorted(found.calls)), ("1", 2, [0, 1]))
        ledgers3[1].calls[3] = call(2, group="1", ranks=sub)
        ledgers3[0].calls[1] = call(1, "barrier", "", group="1", ranks=sub)  # group 1 now differs at call 1
        self.assertEqual((first_divergence(ledgers3).group, first_divergence(ledgers3).seq), ("1", 1))
        missing = first_divergence({0: ledger(0, call(1), call(2)), 1: ledger(1, call(1))})
        self.assertEqual((missing.seq, missing.calls[1]), (2, None))

    def test_point_to_point_and_faulted_calls_are_not_compared(self):
        ledgers = {0: ledger(0, call(1, "send", compared=False), call(2)),
                   1: ledger(1, call(1, "recv", compared=False), call(2))}
        self.assertIsNone(first_divergence(ledgers))
        faulted = {0: ledger(0, call(1)), 1: ledger(1, call(1, compared=False, note="fault: raise"))}
        report = divergence_report(faulted, first_divergence(faulted))
        self.assertIn("  rank 1: all_reduce float32[4] (fault: raise) at t.py:1: stopped before the backend",
                      report.splitlines())

    def test_the_report(self):
        ledgers = {0: ledger(0, call(1, "barrier", "", site="t.py:3"), call(2, site="t.py:5")),
                   1: ledger(1, call(1, "barrier", "", site="t.py:3"))}
        self.assertEqual(divergence_report(ledgers, first_divergence(ledgers), {1: "t.py:7"}).splitlines(), [
            "collective calls first differ at call 2 of group 0 (ranks 0, 1):",
            "  rank 0: all_reduce float32[4] at t.py:5",
            "  rank 1: no call 2 (its last: #1 barrier at t.py:3; it was at t.py:7)",
            "last calls:",
            "  rank 0: #1 barrier at t.py:3 | #2 all_reduce float32[4] at t.py:5",
            "  rank 1: #1 barrier at t.py:3"])

    def test_lockstep_in_the_verdict(self):
        differ = [RankOutcome(0, Status.PASSED, ledger=ledger(0, call(1))),
                  RankOutcome(1, Status.PASSED, ledger=ledger(1, call(1, tensors="float32[2, 2]")))]
        verdict = combine(differ)
        self.assertEqual(verdict.status, Status.FAILED)
        self.assertEqual(verdict.headline, "the ranks passed but made different collective calls: call 1 of "
                                           "group 0 differs")
        opted_out = [RankOutcome(0, Status.PASSED, ledger=ledger(0, call(1), lockstep=False)),
                     RankOutcome(1, Status.PASSED, ledger=ledger(1, call(1, tensors="float32[2, 2]"), lockstep=False))]
        self.assertEqual(combine(opted_out).status, Status.PASSED)
        self.assertEqual(combine([RankOutcome(0, Status.PASSED, ledger=ledger(0, call(1))),
                                  RankOutcome(1, Status.PASSED, ledger=ledger(1, call(1)))]).status, Status.PASSED)

    def test_a_stopped_rank_says_where_it_was_in_the_users_code(self):
        stack = ('timed out after 5 s\nStack of the test (most recent call last):\n'
                 '  File "/home/me/test_x.py", line 9, in test_x\n'
                 '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 1, in barrier\n')
        verdict = combine([RankOutcome(0, Status.TIMED_OUT, stack, ledger=ledger(0, call(1, "barrier", ""))),
                           RankOutcome(1, Status.PASSED, ledger=ledger(1, call(1, "barrier", ""), call(2)))])
        self.assertIn("  rank 0: no call 2 (its last: #1 barrier at t.py:1; it was at test_x.py:9)",
                      verdict.message.splitlines())

    def test_a_ledger_log_cut_off_anywhere(self):
        # What a killed rank leaves: its last entry cut off mid-line, a call naming an entry
        # that was never written; both are where the ledger ends.
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "ledger")
            log = LedgerLog(path, 1, lockstep=True)
            first, second = call(0), call(0, "barrier", "", reduce_op="", root="")
            log.add_entry(first)
            log.add_entry(second)
            for index in (0, 1, 0):
                log.add_call(index)
            log.add_call(2)  # its entry is not written yet
            log.close()
            self.assertEqual(read_ledger_file(path), ledger(1, call(1), call(2, "barrier", ""), call(3)))
            with open(ledger_files(path)[0], "a") as cut:
                cut.write('["all_re')
            self.assertEqual(read_ledger_file(path), ledger(1, call(1), call(2, "barrier", ""), call(3)))
        self.assertIsNone(read_ledger_file(os.path.join(directory, "gone")))

    def test_a_ledger_log_grows_and_numbers_calls_per_group(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "ledger")
            log = LedgerLog(path, 0, lockstep=False)
            log.add_entry(call(0))
            log.add_entry(call(0, group="1"))
            made = 40000  # more than the first map holds
            for number in range(made):
                log.add_call(number % 2)
            log.close()
            read = read_ledger_file(path)
        self.assertEqual((read.rank, read.lockstep, len(read.calls)), (0, False, made))
        self.assertEqual([(c.group, c.seq) for c in read.calls[-2:]], [("0", made // 2), ("1", made // 2)])

    def test_nothing_is_recorded_when_the_setting_is_off(self):
        from torch_testing_ext._engine.ledger import recording
        from torch_testing_ext.collectives import current_calls

        with mock.patch.dict(os.environ, {"TORCH_TESTING_EXT_COLLECTIVES": "off"}):
            self.assertIsNone(recording.begin(0))
            self.assertEqual(current_calls(), [])
            self.assertIsNone(recording.end())
        with mock.patch.dict(os.environ, {"TORCH_TESTING_EXT_COLLECTIVES": "record"}):
            self.assertIsNotNone(recording.begin(0))
            self.assertIsNotNone(recording.end())

    def test_reduce_ops_are_named_alike_however_they_are_given(self):
        import torch.distributed as dist

        from torch_testing_ext._engine.ledger.recording import _describe_reduce_op, _reduce_op_key

        # The enum, a ReduceOp object of it, functional collectives' string: one name; a premul
        # sum by its factor (ReduceOp objects all compare equal, whatever their factor).
        self.assertEqual([_describe_reduce_op(op) for op in (dist.ReduceOp.AVG, dist.ReduceOp(dist.ReduceOp.AVG),
                                                                "avg")], ["AVG", "AVG", "AVG"])
        halves, thirds = dist._make_nccl_premul_sum(0.5), dist._make_nccl_premul_sum(3.0)
        self.assertNotEqual(_reduce_op_key(halves), _reduce_op_key(thirds))
        self.assertTrue(_describe_reduce_op(halves).startswith("PREMUL_SUM"), _describe_reduce_op(halves))

    def test_a_group_c10d_does_not_know_is_named_by_its_type(self):
        from torch_testing_ext._engine.ledger.recording import Recorder

        class Backend:  # old code passes a bare backend as the group of an object collective
            pass

        self.assertEqual(Recorder(0, None, True).group(Backend()), ("Backend", ()))

    def test_inject_faults_bad_arguments(self):
        cases = [({"action": "explode"},
                  "inject_fault(action='explode'): expected one of raise, exit, kill, hang, delay"),
                 ({"nth": 0}, "inject_fault(nth=0): expected a call number, 1 or more"),
                 ({"rank": -1}, "inject_fault(rank=-1): expected a rank number, 0 or more"),
                 ({"op": ""}, "inject_fault(op=''): expected an op name such as 'all_reduce'"),
                 ({"action": "delay"}, "inject_fault(action='delay', seconds=None): expected a positive number of "
                                       "seconds")]
        for changes, message in cases:
            arguments = {"rank": 1, "op": "all_reduce", **changes}
            with self.subTest(message), self.assertRaises(ValueError) as raised:
                inject_fault(**arguments)
            self.assertEqual(str(raised.exception), message)


class TestDivergingRanks(TestCase):
    def test_a_rank_that_skips_a_barrier(self):
        text = failure_text(run_case(ledger_cases.Diverging, "test_rank_1_skips_a_barrier"))
        self.assertIn("timed out after 3 s", text)
        self.assertEqual(report_of(text)[:3], [
            "collective calls first differ at call 2 of group 0 (ranks 0, 1):",
            f"  rank 0: barrier at {at('second barrier')}",
            f"  rank 1: all_reduce float32[4] SUM at {at('rank 1 all_reduce')}"])
        self.assertNotIn("recording.py", text, "the ledger's wrapper is left out of the stacks")

    def test_mismatched_shapes_are_both_shown(self):
        text = failure_text(run_case(ledger_cases.Diverging, "test_shapes_differ_and_the_backend_says_so"))
        where = at("mismatched all_reduce")
        self.assertEqual(report_of(text)[1:3], [f"  rank 0: all_reduce float32[2] SUM at {where}",
                                                f"  rank 1: all_reduce float32[3] SUM at {where}"])

    def test_a_mismatch_the_backend_completed_fails_the_lockstep(self):
        result = run_case(ledger_cases.Diverging, "test_shapes_differ_and_the_backend_completes")
        text = failure_text(result)
        self.assertEqual(len(result.failures), 1)
        self.assertIn("the ranks passed but made different collective calls: call 1 of group 0 differs (lockstep)",
                      text)
        self.assertIn(f"  rank 1: all_reduce float32[2, 2] SUM at {at('same numel all_reduce')}", text)

    def test_what_decides_the_result_is_compared(self):
        # The reduce op, the root and async or not differ: the calls differ, even where the
        # backend completes them (gloo reduces with each rank's own op).
        cases = {"test_reduce_ops_differ": ("reduce op all_reduce", "all_reduce float32[4] SUM",
                                            "all_reduce float32[4] MAX"),
                 "test_roots_differ": ("root broadcast", "broadcast float32[4] src=0", "broadcast float32[4] src=1"),
                 "test_async_differs": ("async all_reduce", "all_reduce float32[4] SUM async",
                                        "all_reduce float32[4] SUM")}
        for name, (line, rank0, rank1) in cases.items():
            with self.subTest(name):
                text = failure_text(run_case(ledger_cases.Diverging, name))
                report = report_of(text)
                self.assertEqual(report[:3], ["collective calls first differ at call 1 of group 0 (ranks 0, 1):",
                                              f"  rank 0: {rank0} at {at(line)}", f"  rank 1: {rank1} at {at(line)}"])

    def test_functional_collectives_once_each_at_the_users_line(self):
        result = run_case(ledger_cases.Functional, "test_each_functional_collective_is_recorded_once_at_the_users_line")
        self.assertTrue(result.wasSuccessful(), result.failures + result.errors)

    def test_passing_ranks_and_the_opt_out_pass(self):
        for name in ("test_ranks_may_differ_when_the_test_says_so", "test_same_calls_pass",
                     "test_dtensor_redistribution_is_recorded"):
            with self.subTest(name):
                result = run_case(ledger_cases.Diverging, name)
                self.assertTrue(result.wasSuccessful(), result.failures + result.errors)


class TestFaults(TestCase):
    def fault(self, name):
        return failure_text(run_case(ledger_cases.Faults, name))

    def test_raise(self):
        # Rank 0 waits in the all_reduce rank 1 never joins until the fail-fast grace stops it;
        # how long the grace lasts is test_supervisor's (on a fake clock): a shorter one here
        # only spares the wait.
        with mock.patch.object(supervisor, "FAIL_FAST_GRACE", 1.0):
            text = self.fault("test_raise")
        self.assertIn("InjectedFault: injected fault: all_reduce call 2 on rank 1", text)
        self.assertIn(f"  rank 1: all_reduce float32[2] SUM (fault: raise) at {at('second all_reduce')}: stopped "
                      "before the backend", text)

    def test_exit_and_kill_name_the_rank(self):
        self.assertIn("rank 1 exited with code 1 without reporting an outcome", self.fault("test_exit"))
        self.assertIn("rank 1 died from signal SIGKILL", self.fault("test_kill"))

    def test_hang_ends_at_the_timeout(self):
        text = failure_text(run_case(ledger_cases.FaultHang, "test_hang"))
        self.assertIn("rank 1 timed out:", text)
        self.assertIn("(fault: hang)", text)

    def test_delay_lets_the_call_go_on(self):
        result = run_case(ledger_cases.Faults, "test_delay")
        self.assertTrue(result.wasSuccessful(), result.failures + result.errors)

    def test_a_fault_that_never_fires_fails(self):
        self.assertIn("the fault inject_fault(rank=1, op='all_reduce', nth=3, action='raise') never fired: rank 1 "
                      "made 2 all_reduce calls", self.fault("test_never_fires"))


class TestInvisible(TestCase):
    """Recording changes nothing the code under test can observe: ``fixtures/ledger_invisible.py``
    writes what its tests see (CommDebugMode's counts, a TorchFunctionMode's and a
    TorchDispatchMode's calls, torch.compile's frames and graphs, the profiler's events, the
    autograd of functional collectives, module and DDP communication hooks, warnings and the
    lines they name), once recording and
    once with ``TORCH_TESTING_EXT_COLLECTIVES=off`` (no wrapper installed), and every rank of
    every test must have seen the same."""

    def test_a_test_sees_the_same_with_the_ledger_on_and_off(self):
        # The two runs are independent processes (the setting is read when each starts its
        # fork server): side by side, they take the time of one and a bit.
        directories = {setting: tempfile.mkdtemp(prefix=f"ledger-observed-{setting}-") for setting in ("record", "off")}
        for directory in directories.values():
            self.addCleanup(shutil.rmtree, directory, ignore_errors=True)
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = {setting: pool.submit(run_file, INVISIBLE, env={"TORCH_TESTING_EXT_COLLECTIVES": setting,
                                                                   "OBSERVED_DIR": directory}, timeout=600)
                    for setting, directory in directories.items()}
        seen = {}
        for setting, directory in directories.items():
            assert_outcomes(self, runs[setting].result(), passed=7)
            seen[setting] = {name: open(os.path.join(directory, name)).read() for name in sorted(os.listdir(directory))}
        self.assertEqual(len(seen["record"]), 14)  # 7 tests, 2 ranks
        for name, observed in seen["record"].items():
            with self.subTest(name):
                self.assertEqual(json.loads(observed), json.loads(seen["off"][name]))


class TestOtherWorlds(TestCase):
    def test_kept_ranks_check_lockstep(self):
        result = unittest.TestResult()
        unittest.TestSuite([ledger_cases.KeptDiverging("test_a_same_numel"),
                            ledger_cases.KeptDiverging("test_b_next_world_is_fine")]).run(result)  # closes the worlds
        self.assertEqual((result.testsRun, len(result.errors)), (2, 0), result.errors)
        self.assertEqual(len(result.failures), 1)
        self.assertIn("KeptDiverging.test_a_same_numel", str(result.failures[0][0]))
        self.assertIn("(lockstep)", result.failures[0][1])

    def test_thread_ranks(self):
        text = failure_text(run_case(ledger_cases.ThreadDiverging, "test_same_numel"))
        self.assertIn(f"  rank 1: all_reduce float32[2, 2] SUM at {at('thread all_reduce')}", text)
        self.assertIn("injected fault: all_reduce call 1 on rank 1",
                      failure_text(run_case(ledger_cases.ThreadDiverging, "test_fault_raises")))
        self.assertIn("needs rank processes: a thread rank shares the test's process",
                      failure_text(run_case(ledger_cases.ThreadDiverging, "test_kill_needs_processes")))

    def test_launched_ranks(self):
        with tempfile.TemporaryDirectory(prefix="ledger-launched-") as directory:
            with open(os.path.join(directory, "test_launched_ledger.py"), "w") as file:
                file.write(LAUNCHED)
            result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                                     "--nproc-per-node", "2", "test_launched_ledger.py"], cwd=directory,
                                    env=checkout_env(OMP_NUM_THREADS="1"), capture_output=True, text=True,
                                    timeout=300)
        output = result.stdout + result.stderr
        self.assertIn("the ranks passed but made different collective calls: call 1 of group 0 differs (lockstep)",
                      output)
        self.assertIn("  rank 1: all_reduce float32[2, 2] SUM at test_launched_ledger.py:10", output)
        # The hung rank's ledger comes with its outcome from the watchdog.
        self.assertIn("  rank 1: no call 2 (its last: #1 barrier at test_launched_ledger.py:15)", output)

    def test_a_pytest_test_on_ranks(self):
        run = PytestRun({"test_native_ledger.py": '''
import pytest, torch, torch.distributed as dist

@pytest.mark.world_size(2)
def test_same_numel(rank, process_group):
    t = torch.ones(4) if rank == 0 else torch.ones(2, 2)
    dist.all_reduce(t)
'''})
        self.addCleanup(run.cleanup)
        result = run.run("-q")
        section = failure_section(result.stdout, "test_same_numel")
        self.assertEqual(section[0], "RankFailure: the ranks passed but made different collective calls: call 1 of "
                                     "group 0 differs (lockstep)")
        expected = r"  rank 1: all_reduce float32\[2, 2\] SUM at test_native_ledger\.py:\d+"
        self.assertTrue(any(re.fullmatch(expected, line) for line in section), section)
