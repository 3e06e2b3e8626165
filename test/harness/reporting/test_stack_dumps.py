"""A hung rank's report shows the test's stack, not the harness's.

Pure tests of ``reporting.stack_dumps`` on faulthandler dumps (as a rank writes them), then
end to end, in this process: one test whose five ranks hang each their own way (in a gloo
collective, asleep beside a thread of their own, holding the GIL in C code, with SIGUSR1
blocked in the test's thread) reaches its timeout once, and each rank is reported from the
test's frame on; a rank whose test took SIGUSR1 over shows its raw output.
(Kept ranks: kept/test_continuous_test_case.py checks the same of a hang in MultiProcContinuousTest.)
"""

import linecache
import os
import threading
from pathlib import Path
from unittest import mock

import torch_testing_ext
from torch_testing_ext._engine._torch_private import HIDDEN_FROM_WARNINGS
from torch_testing_ext._engine.reporting.stack_dumps import is_harness_file, parse_dump, trim_dump
from torch_testing_ext.common_utils import TestCase

from fixtures import hung_ranks
from fixtures.runs import assert_outcomes, run_case

TIMED_OUT = f"timed out after {hung_ranks.HungRanks.timeout:g} s; ranks still running: 0, 1, 2, 3, 4"
PACKAGE = Path(torch_testing_ext.__file__).resolve().parent
STDLIB = Path(threading.__file__).resolve().parent

DUMP = f"""Thread 0x00007f4924fff6c0 (most recent call first):
  File "{STDLIB}/multiprocessing/connection.py", line 395 in _recv
  File "{PACKAGE}/fresh_ranks/rank_process.py", line 49 in watch
  File "{STDLIB}/threading.py", line 982 in run
  File "{STDLIB}/threading.py", line 1002 in _bootstrap

Thread 0x00007f4925aaa6c0 (most recent call first):
  File "{STDLIB}/threading.py", line 327 in wait
  File "/home/me/tests/test_x.py", line 6 in wait_for_a_signal
  File "{STDLIB}/threading.py", line 982 in run
  File "{STDLIB}/threading.py", line 1002 in _bootstrap

Current thread 0x00007f49437c1b80 (most recent call first):
  File "/usr/lib/site-packages/torch/distributed/distributed_c10d.py", line 5356 in barrier
  File "/home/me/tests/test_x.py", line 12 in test_all_reduce
  File "{PACKAGE}/fresh_ranks/rank_process.py", line 96 in run_between_hooks
  File "{STDLIB}/multiprocessing/process.py", line 108 in run
  File "{STDLIB}/multiprocessing/forkserver.py", line 274 in main
  File "<string>", line 1 in <module>
"""


class TestTrimDump(TestCase):
    def test_parse_keeps_threads_and_frames_outermost_first(self):
        threads = parse_dump("noise before\n" + DUMP + "noise after\n")
        self.assertEqual([(t.ident, t.current, len(t.frames)) for t in threads],
                         [("0x00007f4924fff6c0", False, 4), ("0x00007f4925aaa6c0", False, 4),
                          ("0x00007f49437c1b80", True, 6)])
        self.assertEqual(threads[2].frames[0].path, "<string>")
        self.assertEqual(threads[2].frames[-1].name, "barrier")

    def test_the_test_stack_first_then_the_tests_threads_and_no_watcher(self):
        self.assertEqual(trim_dump(DUMP).splitlines(), [
            "Stack of the test (most recent call last):",
            '  File "/home/me/tests/test_x.py", line 12, in test_all_reduce',
            '  File "/usr/lib/site-packages/torch/distributed/distributed_c10d.py", line 5356, in barrier',
            "Thread 0x00007f4925aaa6c0 (most recent call last):",
            '  File "/home/me/tests/test_x.py", line 6, in wait_for_a_signal',
            f'  File "{STDLIB}/threading.py", line 327, in wait',
            "    " + linecache.getline(f"{STDLIB}/threading.py", 327).strip(),  # a real file: its source
        ])

    def test_source_lines_are_shown_where_the_file_is_readable(self):
        here = Path(__file__).resolve()
        dump = (f"Current thread 0x1 (most recent call first):\n  File \"{here}\", line 1 in <module>\n"
                f"  File \"{PACKAGE}/fresh_ranks/rank_process.py\", line 96 in run_between_hooks\n")
        self.assertEqual(trim_dump(dump).splitlines()[2],
                         '    """A hung rank\'s report shows the test\'s stack, not the harness\'s.')

    def test_the_last_of_several_dumps_counts(self):
        second = DUMP.replace("line 12 in test_all_reduce", "line 13 in test_all_reduce")
        self.assertIn("line 13, in test_all_reduce", trim_dump(DUMP + "\n" + second))
        self.assertNotIn("line 12,", trim_dump(DUMP + "\n" + second))

    def test_the_ledgers_wrapper_around_a_collective_is_not_shown(self):
        test_line = '  File "/home/me/tests/test_x.py", line 12 in test_all_reduce\n'
        wrapped = DUMP.replace(test_line, f'  File "{HIDDEN_FROM_WARNINGS}", line 368 in recorded\n{test_line}')
        self.assertIn(HIDDEN_FROM_WARNINGS, wrapped)
        self.assertEqual(trim_dump(wrapped), trim_dump(DUMP))

    def test_no_dump_or_only_watchers_is_none(self):
        self.assertIsNone(trim_dump("just output\n"))
        self.assertIsNone(trim_dump(DUMP.split("\n\n")[0]))

    def test_harness_files(self):
        self.assertTrue(is_harness_file(f"{PACKAGE}/multiprocess/supervisor.py"))
        self.assertTrue(is_harness_file(f"{STDLIB}/unittest/case.py"))
        self.assertTrue(is_harness_file("<string>"))
        self.assertFalse(is_harness_file(f"{STDLIB}/queue.py"))
        self.assertFalse(is_harness_file("/home/me/tests/test_x.py"))


    def test_the_thread_that_took_the_signal_may_come_anywhere(self):
        # faulthandler lists threads newest first and marks the one that ran its handler.
        dump = (DUMP.replace("Thread 0x00007f4924fff6c0", "Current thread 0x00007f4924fff6c0")
                .replace("Current thread 0x00007f49437c1b80", "Thread 0x00007f49437c1b80"))
        self.assertEqual([(t.ident, t.current) for t in parse_dump(dump)],
                         [("0x00007f4924fff6c0", True), ("0x00007f4925aaa6c0", False),
                          ("0x00007f49437c1b80", False)])
        self.assertEqual(trim_dump(dump), trim_dump(DUMP))

    def test_a_new_dump_after_output_or_at_a_thread_seen_before(self):
        second = DUMP.replace("line 12 in test_all_reduce", "line 13 in test_all_reduce")
        for between in ("", "printed by the test\n", "\n"):
            threads = parse_dump(DUMP + between + second)
            self.assertEqual(len(threads), 3, repr(between))
            self.assertEqual(threads[2].frames[-2].line, 13)

    def test_a_thread_the_harness_started_is_left_out_whatever_it_waits_in(self):
        watcher = (f"Thread 0x2 (most recent call first):\n"
                   f'  File "{STDLIB}/selectors.py", line 415 in select\n'
                   f'  File "{PACKAGE}/fresh_ranks/rank_process.py", line 49 in watch\n'
                   f'  File "{STDLIB}/threading.py", line 982 in run\n'
                   f'  File "{STDLIB}/threading.py", line 1002 in _bootstrap\n\n')
        self.assertEqual(trim_dump(watcher + DUMP.split("\n\n", 1)[1]), trim_dump(DUMP))

    def test_threads_without_python_frames_are_left_out(self):
        dump = "Thread 0x3 (most recent call first):\n  <no Python frame>\n\n" + DUMP
        self.assertEqual(len(parse_dump(dump)), 4)
        self.assertEqual(trim_dump(dump), trim_dump(DUMP))

    def test_a_test_thread_in_the_harness_itself_leaves_the_raw_dump(self):
        # Nothing of the test's own on its thread: trimming would hide where it waits.
        in_harness = DUMP.replace(
            '  File "/usr/lib/site-packages/torch/distributed/distributed_c10d.py", line 5356 in barrier\n'
            '  File "/home/me/tests/test_x.py", line 12 in test_all_reduce\n', "")
        self.assertEqual(len(parse_dump(in_harness)[2].frames), 4)
        self.assertIsNone(trim_dump(in_harness))

    def test_no_test_thread_leaves_the_raw_dump(self):
        self.assertIsNone(trim_dump(DUMP.rsplit("\n\n", 1)[0]))  # the user's thread only

class TestHungRanksEndToEnd(TestCase):
    """One test of ``fixtures/hung_ranks.py`` whose five ranks each hang their own way, run in
    this process (its ranks forked from this process's fork server) through the real
    supervisor: one timeout, and each rank's part of the report."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        environ = {k: v for k, v in os.environ.items() if k != "TORCH_TESTING_EXT_TIMEOUT"}
        with mock.patch.dict(os.environ, environ, clear=True):
            cls.result = run_case(hung_ranks.HungRanks, "test_each_rank_hangs_its_own_way")
        cls.report = "\n".join(text for _, text in cls.result.failures + cls.result.errors)

    def rank_lines(self, rank):
        prefix = f"[rank {rank}] "
        return [line[len(prefix):] for line in self.report.splitlines() if line.startswith(prefix)]

    def assertStackOfTheTest(self, lines, hang):
        """The rank's part starts with the timeout and the test's stack from the test's frame."""
        self.assertEqual(lines[:2], [TIMED_OUT, "Stack of the test (most recent call last):"], self.report)
        self.assertRegex(lines[2], r'hung_ranks\.py", line \d+, in test_each_rank_hangs_its_own_way$')
        self.assertEqual(lines[3], "    getattr(self, HANGS[self.rank])()")
        self.assertRegex(lines[4], rf'hung_ranks\.py", line \d+, in {hang}$')

    def assertNoHarnessFrames(self, lines):
        for line in lines:
            self.assertNotIn(str(PACKAGE), line)
            self.assertNotIn(HIDDEN_FROM_WARNINGS, line)  # the ledger's wrapper around the collective
            for runner in ("multiprocessing/", "forkserver.py", 'File "<string>"', "threading.py\", line 1"):
                self.assertNotIn(runner, line)

    def assertOnlyThreadIsTheTests(self, lines):
        """The one thread shown besides the test's is the one the test started, from its target
        (not the harness's watcher)."""
        threads = [line for line in lines if line.startswith("Thread 0x")]
        self.assertEqual(len(threads), 1, lines)
        self.assertRegex(lines[lines.index(threads[0]) + 1], r"line \d+, in wait_for_a_signal$")

    def test_every_rank_timed_out_and_the_test_is_an_error(self):
        assert_outcomes(self, self.result, errors=1)
        self.assertIn("RankError: 5 of 5 ranks did not pass (rank 0, 1, 2, 3, 4)", self.report)
        self.assertNotIn("most recent call first", self.report)  # no raw dump where one could be read

    def test_a_rank_waiting_in_a_collective(self):
        rank0 = self.rank_lines(0)
        self.assertStackOfTheTest(rank0, "wait_in_a_collective")
        self.assertIn("    dist.barrier()", rank0)
        self.assertTrue(any(line.endswith(", in barrier") for line in rank0), rank0)  # down into torch
        self.assertNoHarnessFrames(rank0)

    def test_a_rank_asleep_beside_a_thread_of_its_own(self):
        rank1 = self.rank_lines(1)
        self.assertStackOfTheTest(rank1, "sleep_beside_a_thread")
        self.assertIn("    sleep_forever()", rank1)
        self.assertIn("    time.sleep(0.1)", rank1)
        self.assertOnlyThreadIsTheTests(rank1)
        # What the rank printed is still there, without faulthandler's raw dump.
        self.assertEqual(rank1[rank1.index("--- last lines of output ---") + 1:], ["rank 1 reached the barrier"])
        self.assertNoHarnessFrames(rank1)

    def test_a_rank_holding_the_gil_in_c_code(self):
        rank2 = self.rank_lines(2)
        self.assertStackOfTheTest(rank2, "hold_the_gil_in_c_code")
        self.assertEqual(rank2[-1], "    libc.sleep(60)", rank2)
        self.assertNoHarnessFrames(rank2)

    def test_sigusr1_blocked_in_the_tests_thread(self):
        rank3 = self.rank_lines(3)
        self.assertStackOfTheTest(rank3, "sleep_with_sigusr1_blocked")
        self.assertIn("    time.sleep(60)", rank3)
        self.assertOnlyThreadIsTheTests(rank3)  # the lifeline that took the signal is not shown
        self.assertNoHarnessFrames(rank3)

    def test_a_dump_that_cannot_be_read_is_shown_raw(self):
        rank4 = self.rank_lines(4)
        self.assertEqual(rank4[0], f"{TIMED_OUT} (its stacks are in the output below)")
        self.assertEqual(rank4[rank4.index("--- last lines of output ---") + 1:],
                         ["rank 4 is sleeping", "the test's SIGUSR1 handler ran"])
