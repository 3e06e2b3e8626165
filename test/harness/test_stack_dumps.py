"""A hung rank's report shows the test's stack, not the harness's.

Pure tests of ``reporting.stack_dumps`` on faulthandler dumps (as a rank writes them), then
end to end: ranks forked per test that hang in Python, in a gloo collective, beside a thread
of their own, with the GIL held in C code, and with SIGUSR1 blocked in the test's thread, each
reported from the test's frame on; a rank whose test took SIGUSR1 over shows its raw output.
(Kept ranks: test_continuous.py checks the same of a hang in MultiProcContinuousTest.)
"""

import linecache
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import torch_testing_ext
from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.reporting.stack_dumps import is_harness_file, parse_dump, trim_dump

HERE = Path(__file__).resolve().parent
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


SIGNAL_CASES = """
import signal, threading, time
from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import run_tests


def wait_for_a_signal(event):
    event.wait()


class Signals(MultiProcessTestCase):
    world_size = 1
    timeout = 4

    def test_sigusr1_blocked(self):
        # Only the harness's lifeline thread may take the signal now (the test's thread
        # inherits the mask): faulthandler marks it, not the main thread, as current.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        threading.Thread(target=wait_for_a_signal, args=(threading.Event(),), daemon=True).start()
        time.sleep(60)

    def test_sigusr1_taken_over(self):
        signal.signal(signal.SIGUSR1, lambda signum, frame: print("the test's SIGUSR1 handler ran", flush=True))
        print("rank 0 is sleeping", flush=True)
        time.sleep(60)


    def run_signal_case(self, test_id):
        with tempfile.TemporaryDirectory(prefix="tte-stack-dumps-") as tmp:
            fixture = Path(tmp) / "signal_cases.py"
            fixture.write_text(SIGNAL_CASES)
            return self.run_fixture(test_id, fixture)

    def test_sigusr1_blocked_in_the_tests_thread(self):
        rank0 = self.rank_lines(self.run_signal_case("Signals.test_sigusr1_blocked"), 0)
        self.assertEqual(rank0[:2], ["timed out after 4 s; ranks still running: 0",
                                     "Stack of the test (most recent call last):"])
        self.assertRegex(rank0[2], r"line \d+, in test_sigusr1_blocked$")
        self.assertIn("    time.sleep(60)", rank0)
        threads = [line for line in rank0 if line.startswith("Thread 0x")]
        self.assertEqual(len(threads), 1, rank0)  # the test's thread; the lifeline that took the signal is not
        self.assertRegex(rank0[rank0.index(threads[0]) + 1], r"line \d+, in wait_for_a_signal$")
        self.assertNoHarnessFrames(rank0)

    def test_a_dump_that_cannot_be_read_is_shown_raw(self):
        rank0 = self.rank_lines(self.run_signal_case("Signals.test_sigusr1_taken_over"), 0)
        self.assertEqual(rank0[0], "timed out after 4 s; ranks still running: 0 (its stacks are in the output below)")
        self.assertEqual(rank0[rank0.index("--- last lines of output ---") + 1:],
                         ["rank 0 is sleeping", "the test's SIGUSR1 handler ran"])


if __name__ == "__main__":
    run_tests()
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
        self.assertEqual(trim_dump(dump).splitlines()[2], '    """A hung rank\'s report shows the test\'s stack, not the harness\'s.')

    def test_the_last_of_several_dumps_counts(self):
        second = DUMP.replace("line 12 in test_all_reduce", "line 13 in test_all_reduce")
        self.assertIn("line 13, in test_all_reduce", trim_dump(DUMP + "\n" + second))
        self.assertNotIn("line 12,", trim_dump(DUMP + "\n" + second))

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
    """Fixture ranks that hang, reported through the real supervisor."""

    def run_fixture(self, test_id, fixture=HERE / "fixtures" / "rank_faults.py"):
        path = os.pathsep.join(filter(None, [str(HERE.parents[1]), os.environ.get("PYTHONPATH")]))
        result = subprocess.run([sys.executable, str(fixture), test_id],
                                env=dict(os.environ, PYTHONPATH=path, FIXTURE_TIMEOUT="4"),
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        return result.stderr

    def rank_lines(self, output, rank):
        prefix = f"[rank {rank}] "
        return [line[len(prefix):] for line in output.splitlines() if line.startswith(prefix)]

    def assertNoHarnessFrames(self, lines):
        for line in lines:
            self.assertNotIn(str(PACKAGE), line)
            for runner in ("multiprocessing/", "forkserver.py", 'File "<string>"', "threading.py\", line 1"):
                self.assertNotIn(runner, line)

    def test_a_collective_a_sleep_and_a_thread_of_the_test(self):
        output = self.run_fixture("Faults.test_hang_in_a_collective_with_a_thread_rank1")
        rank0, rank1 = self.rank_lines(output, 0), self.rank_lines(output, 1)
        self.assertEqual(rank0[:3], ["timed out after 4 s; ranks still running: 0, 1",
                                     "Stack of the test (most recent call last):",
                                     rank0[2]])
        self.assertRegex(rank0[2], r'rank_faults\.py", line \d+, in test_hang_in_a_collective_with_a_thread_rank1$')
        self.assertIn("    dist.barrier()", rank0)
        self.assertTrue(any(line.endswith(", in barrier") for line in rank0), rank0)
        # Rank 1: the test, down to where it sleeps; the thread it started, from its target.
        self.assertIn("    hang_forever()", rank1)
        self.assertIn("    time.sleep(0.1)", rank1)
        thread = rank1.index(next(line for line in rank1 if line.startswith("Thread 0x")))
        self.assertRegex(rank1[thread + 1], r"line \d+, in wait_for_a_signal$")
        self.assertEqual(sum(line.startswith("Thread 0x") for line in rank1), 1, "a watcher thread shown")
        # What each rank printed is still there, without faulthandler's raw dump.
        self.assertIn("--- last lines of output ---", rank1)
        self.assertEqual(rank1[rank1.index("--- last lines of output ---") + 1:], ["rank 1 reached the barrier"])
        self.assertNotIn("most recent call first", output)
        self.assertNoHarnessFrames(rank0 + rank1)

    def test_a_rank_holding_the_gil_in_c_code(self):
        output = self.run_fixture("Faults.test_hold_the_gil_rank1")
        rank1 = self.rank_lines(output, 1)
        self.assertEqual(rank1[0], "timed out after 4 s; ranks still running: 1")
        self.assertRegex(rank1[2], r"line \d+, in test_hold_the_gil_rank1$")
        self.assertIn('    re.match(r"(a+)+$", "a" * 64 + "b")', rank1)
        self.assertNoHarnessFrames(rank1)


    def run_signal_case(self, test_id):
        with tempfile.TemporaryDirectory(prefix="tte-stack-dumps-") as tmp:
            fixture = Path(tmp) / "signal_cases.py"
            fixture.write_text(SIGNAL_CASES)
            return self.run_fixture(test_id, fixture)

    def test_sigusr1_blocked_in_the_tests_thread(self):
        rank0 = self.rank_lines(self.run_signal_case("Signals.test_sigusr1_blocked"), 0)
        self.assertEqual(rank0[:2], ["timed out after 4 s; ranks still running: 0",
                                     "Stack of the test (most recent call last):"])
        self.assertRegex(rank0[2], r"line \d+, in test_sigusr1_blocked$")
        self.assertIn("    time.sleep(60)", rank0)
        threads = [line for line in rank0 if line.startswith("Thread 0x")]
        self.assertEqual(len(threads), 1, rank0)  # the test's thread; the lifeline that took the signal is not
        self.assertRegex(rank0[rank0.index(threads[0]) + 1], r"line \d+, in wait_for_a_signal$")
        self.assertNoHarnessFrames(rank0)

    def test_a_dump_that_cannot_be_read_is_shown_raw(self):
        rank0 = self.rank_lines(self.run_signal_case("Signals.test_sigusr1_taken_over"), 0)
        self.assertEqual(rank0[0], "timed out after 4 s; ranks still running: 0 (its stacks are in the output below)")
        self.assertEqual(rank0[rank0.index("--- last lines of output ---") + 1:],
                         ["rank 0 is sleeping", "the test's SIGUSR1 handler ran"])


if __name__ == "__main__":
    run_tests()
