"""Self-tests: runs of a multi-process file at the same time pass, never collide, leave nothing.

``fixtures/rendezvous_cases.py`` rendezvouses every way the harness offers (the test's store
file, ``rendezvous_init_method``, ``dynamo_dist_per_rank_init``) and writes temporary files.
Several runs of it go at once, each a ``process_tree.marked_run`` run with its own marker and
TMPDIR, and so does ``pytest -n 2`` on it (pytest-xdist: each worker is a test process with
its own fork server, and leaves through execnet). Every run must pass, no output may mention a
port or rendezvous collision, and 1 s after each run's exit none of its processes may be left,
zombies included, nor any file in its TMPDIR. ``benchmarks/concurrent_runs.py`` does the same
for the real suite.

Runs that each get a TMPDIR of their own often get a long one (nested in a job's or a test's
temporary directory); the fork server's socket must still bind there, so some of the runs
here have a TMPDIR too long to hold an ``AF_UNIX`` socket path.
"""

import glob
import importlib.util
import os
import re
import tempfile
import unittest

from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.process_tree.marked_run import MarkedRun, watch_all

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "rendezvous_cases.py")
LONG_TMPDIR = 100  # characters: "<TMPDIR>/torch_testing_ext-XXXXXXXX/mp-XXXXXXXX/listener-XXXXXXXX" > 107
COLLISION = re.compile(r"EADDRINUSE|Address already in use|DistNetworkError|DistStoreError"
                       r"|Connection refused|FileExistsError|FileNotFoundError|path too long", re.IGNORECASE)


class TestConcurrentRuns(TestCase):
    def run_all(self, *runs):
        for run in runs:
            self.addCleanup(run.close)
        return runs, watch_all(runs, timeout=180)

    def assertAllCleanAndPassed(self, runs, results, passed):
        for run, (code, output, left) in zip(runs, results):
            self.assertEqual(code, 0, output)
            self.assertIsNotNone(re.search(passed, output), output)
            self.assertEqual(COLLISION.findall(output), [], output)
            self.assertEqual(left, [], output)
            self.assertEqual(os.listdir(run.tmpdir), [], "the run left temporary files")
            # A socket directory outside a long TMPDIR is the test process's own, and removed.
            self.assertEqual(glob.glob(f"/tmp/torch_testing_ext-{run.process.pid}-*"), [])

    def test_concurrent_runs_of_one_file(self):
        runs, results = self.run_all(MarkedRun(FIXTURE), MarkedRun(FIXTURE, tmpdir_length=LONG_TMPDIR),
                                     MarkedRun(FIXTURE, tmpdir_length=LONG_TMPDIR))
        self.assertAllCleanAndPassed(runs, results, r"Ran 4 tests in .*\n\nOK\n")
        for run in runs:  # test process, server, resource tracker and 2 ranks per test
            self.assertGreaterEqual(len(run.seen), 3 + 2 * 4)

    @unittest.skipIf(importlib.util.find_spec("xdist") is None, "needs pytest-xdist")
    def test_pytest_xdist_workers(self):
        # pytest keeps its base temp directory on purpose; keep it out of the run's TMPDIR.
        basetemp = tempfile.TemporaryDirectory(prefix="tte-selftest-pytest-")
        self.addCleanup(basetemp.cleanup)
        runs, results = self.run_all(MarkedRun("-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider",
                                               f"--basetemp={basetemp.name}/base", FIXTURE))
        self.assertAllCleanAndPassed(runs, results, r"\b4 passed\b")
        # The controller, two workers, and each worker's fork server, tracker and ranks.
        self.assertGreaterEqual(len(runs[0].seen), 3 + 2 * 2 + 2 * 4)


if __name__ == "__main__":
    run_tests()
