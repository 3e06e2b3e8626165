"""Self-tests: runs of a multi-process file at the same time pass, never collide, leave nothing.

``fixtures/rendezvous_cases.py`` rendezvouses every way the harness offers (the test's store
file, ``rendezvous_init_method``, ``dynamo_dist_per_rank_init``) and writes temporary files.
Runs of it go at once, each a ``process_tree.marked_run`` run with its own marker and TMPDIR,
and so does ``pytest -n 2`` on it (pytest-xdist: each worker is a test process with
its own fork server, and leaves through execnet). Every run must pass, no output may mention a
port or rendezvous collision, and 1 s after each run's exit none of its processes may be left,
zombies included, nor any file in its TMPDIR. All these runs go at once, started by the
class; each test reads its runs' ends. ``benchmarks/concurrent_runs.py`` does the same for the
real suite.

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

from torch_testing_ext._engine.process_tree.marked_run import MarkedRun, watch_all
from torch_testing_ext.common_utils import TestCase

from fixtures.paths import FIXTURES

FIXTURE = str(FIXTURES / "rendezvous_cases.py")
LONG_TMPDIR = 100  # characters: "<TMPDIR>/torch_testing_ext-XXXXXXXX/mp-XXXXXXXX/listener-XXXXXXXX" > 107
COLLISION = re.compile(r"EADDRINUSE|Address already in use|DistNetworkError|DistStoreError"
                       r"|Connection refused|FileExistsError|FileNotFoundError|path too long", re.IGNORECASE)
XDIST = importlib.util.find_spec("xdist") is not None


class TestConcurrentRuns(TestCase):
    """Every run goes at once: two of the file with a long TMPDIR (both put their socket
    directories in /tmp), and ``pytest -n 2`` on it, whose two workers share one TMPDIR of the
    usual length. Without pytest-xdist a run of the file with that TMPDIR takes its place."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # pytest keeps its base temp directory on purpose; keep it out of the run's TMPDIR.
        cls.basetemp = tempfile.TemporaryDirectory(prefix="tte-selftest-pytest-")
        cls.addClassCleanup(cls.basetemp.cleanup)
        cls.files = [cls.start(FIXTURE, tmpdir_length=LONG_TMPDIR), cls.start(FIXTURE, tmpdir_length=LONG_TMPDIR)]
        cls.xdist = []
        if XDIST:
            cls.xdist.append(cls.start("-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider",
                                       f"--basetemp={cls.basetemp.name}/base", FIXTURE))
        else:
            cls.files.append(cls.start(FIXTURE))
        runs = cls.files + cls.xdist
        cls.results = dict(zip(runs, watch_all(runs, timeout=180), strict=True))

    @classmethod
    def start(cls, *args, **kwargs):
        run = MarkedRun(*args, **kwargs)
        cls.addClassCleanup(run.close)
        return run

    def assertAllCleanAndPassed(self, runs, passed):
        for run in runs:
            code, output, left = self.results[run]
            self.assertEqual(code, 0, output)
            self.assertIsNotNone(re.search(passed, output), output)
            self.assertEqual(COLLISION.findall(output), [], output)
            self.assertEqual(left, [], output)
            self.assertEqual(os.listdir(run.tmpdir), [], "the run left temporary files")
            # A socket directory outside a long TMPDIR is its test process's own (each xdist
            # worker's), and removed.
            self.assertEqual([path for pid in run.seen for path in glob.glob(f"/tmp/torch_testing_ext-{pid}-*")],
                             [])

    # Seen: every process that carries the run's marker at one of the scans of /proc, 20 ms
    # apart. Scans are samples: on a loaded machine (the suite runs two files at once) a rank
    # can start and end between two of them, so only what must have been seen is counted: the
    # test process, the server, the resource tracker and both ranks of one rendezvous test.

    def test_concurrent_runs_of_one_file(self):
        self.assertAllCleanAndPassed(self.files, r"Ran 4 tests in .*\n\nOK\n")
        for run in self.files:
            self.assertGreaterEqual(len(run.seen), 3 + 2)

    @unittest.skipUnless(XDIST, "needs pytest-xdist")
    def test_pytest_xdist_workers(self):
        self.assertAllCleanAndPassed(self.xdist, r"\b4 passed\b")
        # The controller, two workers, and each worker's fork server, tracker and ranks.
        self.assertGreaterEqual(len(self.xdist[0].seen), 3 + 2 * 2 + 2 * 3)
