"""A hung rank's report shows the test's stack, not the harness's.

Pure tests of ``reporting.stack_dumps`` on faulthandler dumps (as a rank writes them), then
end to end: ranks forked per test that hang in Python, in a gloo collective, beside a thread
of their own, and with the GIL held in C code, each reported from the test's frame on.
(Kept ranks: test_continuous.py checks the same of a hang in MultiProcContinuousTest.)
"""

import linecache
import os
import subprocess
import sys
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
  File "{PACKAGE}/multiprocess/rank_process.py", line 49 in watch
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
  File "{PACKAGE}/multiprocess/rank_process.py", line 96 in run_between_hooks
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
                f"  File \"{PACKAGE}/multiprocess/rank_process.py\", line 96 in run_between_hooks\n")
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


class TestHungRanksEndToEnd(TestCase):
    """Fixture ranks that hang, reported through the real supervisor."""

    def run_fixture(self, test_id):
        path = os.pathsep.join(filter(None, [str(HERE.parents[1]), os.environ.get("PYTHONPATH")]))
        result = subprocess.run([sys.executable, str(HERE / "fixtures" / "rank_faults.py"), test_id],
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


if __name__ == "__main__":
    run_tests()
