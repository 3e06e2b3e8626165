"""The downstream example, as another project would run it: from the built wheel, outside
this checkout.

The test builds the package's wheel from a copy of its sources (without network:
``--no-build-isolation``), installs it into a fresh virtual environment that reuses this
interpreter's torch and pytest (``--system-site-packages``), installs ``examples/downstream``
there from a copy in a temporary directory, checks that ``torch_testing_ext`` is imported from
the venv and not from the checkout, and runs the example's tests with pytest and with
``python -m torch_testing_ext.run_test`` (``python FILE`` is README's examples' business:
test_readme.py). CI's ``downstream`` job does the same in a venv that holds nothing but torch.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from torch_testing_ext.common_utils import TestCase, run_tests

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "downstream"


def _clean_env():
    """The environment without anything that would point Python at the checkout."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}


class TestDownstreamExample(TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.temp = tempfile.TemporaryDirectory(prefix="downstream-")
        root = Path(cls.temp.name)
        cls.project = root / "minidist"
        shutil.copytree(EXAMPLE, cls.project)
        env_dir = root / "venv"
        venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
        cls.python = str(env_dir / "bin" / "python")
        pip = [sys.executable, "-m", "pip", "--python", cls.python]  # the venv has no pip of its own
        wheels = root / "dist"
        cls.check([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                   "--wheel-dir", str(wheels), str(cls._source_copy(root / "source"))], cwd=root)
        [wheel] = wheels.glob("torch_testing_ext-*.whl")
        quiet = ["--quiet", "--no-deps", "--no-index", "--no-build-isolation", "--ignore-installed"]
        cls.check([*pip, "install", *quiet, str(wheel)], cwd=root)
        cls.check([*pip, "install", *quiet, str(cls.project)], cwd=root)
        shutil.rmtree(cls.project / "build", ignore_errors=True)

    @staticmethod
    def _source_copy(target):
        """What the build reads, copied: building in the checkout would leave build/ there."""
        for name in ("setup.cfg", "pyproject.toml", "README.md"):
            target.mkdir(exist_ok=True)
            shutil.copy2(REPO / name, target / name)
        shutil.copytree(REPO / "torch_testing_ext", target / "torch_testing_ext",
                        ignore=shutil.ignore_patterns("__pycache__"))
        return target

    @classmethod
    def tearDownClass(cls):
        cls.temp.cleanup()
        super().tearDownClass()

    @staticmethod
    def check(command, cwd):
        result = subprocess.run(command, cwd=cwd, env=_clean_env(), capture_output=True, text=True,
                                timeout=600)
        if result.returncode != 0:
            raise AssertionError(f"{command} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
        return result

    def run_in_project(self, *args):
        return subprocess.run([self.python, *args], cwd=self.project, env=_clean_env(),
                              capture_output=True, text=True, timeout=600)

    def test_the_package_comes_from_the_wheel(self):
        result = self.run_in_project("-c", "import torch_testing_ext; print(torch_testing_ext.__file__)")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith(str(Path(self.python).parent.parent)), result.stdout)

    def test_pytest(self):
        result = self.run_in_project("-m", "pytest", "-p", "no:cacheprovider")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertRegex(result.stdout, r"\n=+ 12 passed in [\d.]+s")
        self.assertIn("plugins: torch_testing_ext-", result.stdout)

    def test_driver(self):
        result = self.run_in_project("-m", "torch_testing_ext.run_test", "tests/", "--save-xml", "reports",
                                     "-j", "2")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("run_test: shard 1 of 1: 5 test files", result.stdout)
        self.assertIn("summary: 12 passed, 0 failed, 0 skipped", result.stdout)
        self.assertEqual(sorted(p.name for p in (self.project / "reports").iterdir()),
                         ["test_average.xml", "test_chunks.xml", "test_kept_ranks.xml",
                          "test_plain_pytest.xml", "test_sharded.xml"])
        script = Path(self.python).parent / "tte-run-test"
        self.assertTrue(script.exists(), "the console script was not installed")
        listed = subprocess.run([str(script), "tests/", "--dry-run"], cwd=self.project, env=_clean_env(),
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertEqual(len(re.findall(r"^\s+serial|^\s+parallel", listed.stdout, re.M)), 5, listed.stdout)


if __name__ == "__main__":
    run_tests()
