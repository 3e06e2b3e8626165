"""Self-tests of ``process_tree.proc_table``: the process table, descendants, and whether a
process has begun to exit (what the fork server asks of its owner before removing its files)."""

import os
import signal
import subprocess
import sys
import time
import unittest

from torch_testing_ext._engine.process_tree.proc_table import (
    command_line,
    descendants,
    is_exiting,
    process_table,
)

HAS_PROC = os.path.isdir("/proc/self")


@unittest.skipUnless(HAS_PROC, "needs Linux /proc")
class TestProcTable(unittest.TestCase):
    def start_sleeper(self):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        self.addCleanup(child.wait)
        self.addCleanup(child.kill)
        return child

    def test_a_child_is_a_descendant_with_its_command_line(self):
        child = self.start_sleeper()
        self.assertIn(child.pid, descendants([os.getpid()]))
        self.assertEqual(process_table()[child.pid].ppid, os.getpid())
        self.assertIn("time.sleep(60)", command_line(child.pid))

    def test_started_is_the_start_time_after_boot(self):
        child = self.start_sleeper()
        with open("/proc/uptime") as uptime:
            now = float(uptime.read().split()[0])
        started = process_table()[child.pid].started / os.sysconf("SC_CLK_TCK")
        self.assertLess(abs(now - started), 30)  # it started just now
        self.assertEqual(process_table()[child.pid].started, process_table()[child.pid].started)

    def test_is_exiting(self):
        self.assertFalse(is_exiting(os.getpid()))
        child = self.start_sleeper()
        self.assertFalse(is_exiting(child.pid))
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while not process_table()[child.pid].gone and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertTrue(is_exiting(child.pid), "a zombie has exited")  # not reaped yet
        child.wait()
        self.assertTrue(is_exiting(child.pid), "a reaped process is gone")
