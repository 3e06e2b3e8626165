"""A test run leaves nothing in ``$TMPDIR``: not the run directory, not inductor's cache
directory (``torchinductor_<user>``, which importing Dynamo or inductor makes), whether the
test process, the fork server or the ranks import them, and whatever imports them first.

Each case runs a test file in a child process with a fresh, empty ``TMPDIR`` and without
``TORCHINDUCTOR_CACHE_DIR`` (this process has one of its own), then looks in that TMPDIR.
A cache directory the user chose is used and left in place.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from torch_testing_ext.common_utils import TestCase

from fixtures import inductor_cache_cases
from fixtures.paths import HARNESS
from fixtures.runs import checkout_env

PYTEST_RANKS = """
import pytest
import torch
import torch.distributed as dist


@pytest.mark.world_size(2)
def test_all_reduce_then_compile(rank, world_size, process_group):
    t = torch.ones(2)
    dist.all_reduce(t)
    assert torch.compile(lambda x: x + 1, backend="eager")(t).tolist() == [3.0, 3.0]
"""


class TestNothingLeftInTmpdir(TestCase):
    def setUp(self):
        super().setUp()
        self.work = Path(tempfile.mkdtemp(prefix="tmpdir-litter-"))
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
        self.tmpdir = self.work / "tmp"
        self.tmpdir.mkdir()
        self.report = self.work / "cache-dirs.txt"

    def run_child(self, *args, **env):
        """``python *args`` with the fresh TMPDIR, from the work directory; its output."""
        settings = {"TMPDIR": str(self.tmpdir), "TORCHINDUCTOR_CACHE_DIR": None, "TRITON_CACHE_DIR": None,
                    "INDUCTOR_CACHE_REPORT": str(self.report), **env}
        environ = checkout_env(HARNESS, **settings)
        result = subprocess.run([sys.executable, *map(str, args)], cwd=self.work, env=environ,
                                capture_output=True, text=True, timeout=600)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return result.stdout + result.stderr

    def assert_tmpdir_empty(self, output):
        self.assertEqual(sorted(os.listdir(self.tmpdir)), [], output[-3000:])

    def cache_dirs(self):
        """The inductor cache directories the test process and the ranks were given."""
        return set(self.report.read_text().split())

    def test_a_test_file_run_directly(self):
        output = self.run_child(inductor_cache_cases.__file__)
        self.assert_tmpdir_empty(output)
        # The test process and its ranks shared one cache directory, inside TMPDIR, now gone.
        [cache] = self.cache_dirs()
        self.assertEqual(Path(cache).parent, self.tmpdir)

    def test_the_same_file_and_tests_on_ranks_under_pytest(self):
        ranks = self.work / "test_pytest_ranks.py"
        ranks.write_text(textwrap.dedent(PYTEST_RANKS))
        output = self.run_child("-m", "pytest", "-q", "-p", "no:cacheprovider",
                                f"{inductor_cache_cases.__file__}::TestSingleProcess", ranks)
        self.assertIn("2 passed", output)
        self.assert_tmpdir_empty(output)

    def test_a_file_that_imports_dynamo_before_the_harness(self):
        # torch makes its default directory before the harness is imported: removed, as empty.
        first = self.work / "test_dynamo_first.py"
        first.write_text("import torch._dynamo  # noqa: F401\n" + Path(inductor_cache_cases.__file__).read_text())
        output = self.run_child(first, "TestPlainRanks")
        self.assert_tmpdir_empty(output)
        [cache] = self.cache_dirs()
        self.assertEqual(Path(cache).parent, self.tmpdir)
        self.assertTrue(Path(cache).name.startswith("torchinductor_"), cache)  # torch's own

    def test_a_cache_directory_of_the_users_own_is_used_and_kept(self):
        own = self.work / "my-inductor-cache"
        output = self.run_child(inductor_cache_cases.__file__, "TestSingleProcess", TORCHINDUCTOR_CACHE_DIR=str(own))
        self.assert_tmpdir_empty(output)
        self.assertEqual(self.cache_dirs(), {str(own)})
        self.assertTrue(own.is_dir())
