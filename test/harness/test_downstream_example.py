"""The downstream example, as another project would run it: from the built wheel, outside
this checkout.

The test builds the package's wheel from a copy of its sources (without network:
``--no-build-isolation``), installs it and ``examples/downstream`` (copied into a temporary
directory) with one pip command into a fresh virtual environment that reuses this interpreter's
torch, pytest and setuptools (``--no-deps --no-index``: nothing to resolve or download), and
checks in one probe there that ``torch_testing_ext``, its metadata (the ``tte-run-test``
script, the pytest plugin's entry point) and every module of the source tree, imported, come
from the wheel. The fresh environment sees this interpreter's packages through a ``.pth`` file
that lists this interpreter's site-packages directories after its own: this interpreter's,
whether it is a venv or not (``--system-site-packages`` would give a venv's base interpreter's
instead, with none of the venv's packages), and after the wheel, so an editable install of the
checkout here (whose import hook a plain path in a ``.pth`` does not run) does not hide it.
It then runs the example's tests with the driver (the TestCase files as ``python FILE``, the
plain pytest file under pytest) and with pytest alone (every file, the plugin loaded by its
entry point); each test's outcome is read from JUnit reports.
(``python FILE`` of README's examples is test_readme.py's.) CI's ``downstream`` job does the
same in a venv that holds nothing but torch, and runs ``python FILE`` too.
"""

import json
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from torch_testing_ext._engine.driver.file_reports import read_outcomes
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext.common_utils import TestCase

from fixtures.paths import REPO
from fixtures.runs import SHIPPED_SUITE_ENV

EXAMPLE = REPO / "examples" / "downstream"
# The example's tests by file, as its reports name them.
EXAMPLE_TESTS = {"test_average": 2, "test_chunks": 3, "test_kept_ranks": 3, "test_plain_pytest": 3, "test_sharded": 1}

# Run in the venv: where the package, its metadata and its modules come from (torch not imported).
# Every module is imported too (so torch is): a module found anywhere but in the wheel is named.
_PROBE = """
import importlib, importlib.metadata, json, os, pkgutil, torch_testing_ext
dist = importlib.metadata.distribution("torch_testing_ext")
site = str(dist.locate_file(""))
elsewhere = []
for info in pkgutil.walk_packages(torch_testing_ext.__path__, "torch_testing_ext."):
    if not info.name.endswith(".__main__"):
        # Where the module was imported from (a face of a suite torch ships sets __file__ to
        # torch's file, which it runs).
        path = importlib.import_module(info.name).__spec__.origin
        if not os.path.realpath(path).startswith(os.path.realpath(site) + os.sep):
            elsewhere.append(path)
print(json.dumps({
    "package": torch_testing_ext.__file__,
    "metadata": site,
    "entry_points": sorted(f"{e.group} {e.name} = {e.value}" for e in dist.entry_points),
    "modules": sorted(str(f) for f in dist.files if f.suffix == ".py"),
    "imported_elsewhere": elsewhere,
}))
"""


def _site_directories():
    """This interpreter's site-packages directories (a venv's own, a base interpreter's, the
    user's), as its ``site`` module added them."""
    directories = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        directories.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(directories) if os.path.isdir(d)]


def _fresh_venv(env_dir):
    """A venv without pip that sees this interpreter's packages after its own; its python."""
    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True, env=_clean_env()).stdout.strip()
    Path(purelib, "outer_site_packages.pth").write_text("".join(f"{d}\n" for d in _site_directories()))
    return str(python)


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
        cls.python = _fresh_venv(root / "venv")
        wheels = root / "dist"
        cls.source = cls._source_copy(root / "source")
        cls.check([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                   "--wheel-dir", str(wheels), str(cls.source)], cwd=root)
        [wheel] = wheels.glob("torch_testing_ext-*.whl")
        # One pip for both (the venv has no pip of its own): the wheel, and the example project.
        cls.check([sys.executable, "-m", "pip", "--python", cls.python, "install", "--quiet", "--no-deps",
                   "--no-index", "--no-build-isolation", "--ignore-installed", str(wheel), str(cls.project)],
                  cwd=root)
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

    def run_in_project(self, *args, **env):
        return subprocess.run([self.python, *args], cwd=self.project, env={**_clean_env(), **env},
                              capture_output=True, text=True, timeout=600)

    def test_the_package_its_metadata_and_every_module_come_from_the_wheel(self):
        result = self.run_in_project("-c", _PROBE, **SHIPPED_SUITE_ENV)
        self.assertEqual(result.returncode, 0, result.stderr)
        found = json.loads(result.stdout)
        site = Path(found["metadata"])
        self.assertTrue(site.is_relative_to(Path(self.python).parent.parent), found["metadata"])  # the venv's
        self.assertEqual(found["package"], str(site / "torch_testing_ext" / "__init__.py"))
        self.assertEqual(found["entry_points"], [
            "console_scripts tte-run-test = torch_testing_ext.run_test:console_main",
            "pytest11 torch_testing_ext = torch_testing_ext.pytest_plugin.plugin",
        ])
        package = self.source / "torch_testing_ext"
        sources = sorted(str(path.relative_to(self.source)) for path in package.rglob("*.py"))
        self.assertEqual(found["modules"], sources)
        self.assertEqual(found["imported_elsewhere"], [])
        self.assertTrue((Path(self.python).parent / "tte-run-test").exists(), "the console script was not installed")

    def test_the_driver_runs_the_example(self):
        # The console script; -v shows each file's output (the pytest file's header names the plugins).
        result = subprocess.run([str(Path(self.python).parent / "tte-run-test"), "tests/", "--save-xml", "reports",
                                 "-j", "2", "-v"], cwd=self.project, env=_clean_env(), capture_output=True,
                                text=True, timeout=600)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("run_test: shard 1 of 1: 5 test files", result.stdout)
        self.assertIn("summary: 12 passed, 0 failed, 0 skipped", result.stdout)
        self.assertIn("plugins: torch_testing_ext-", result.stdout)  # under pytest, by its entry point
        reports = sorted((self.project / "reports").iterdir())
        self.assertEqual([path.name for path in reports], [f"{name}.xml" for name in sorted(EXAMPLE_TESTS)])
        statuses = {path.stem: [outcome.status for outcome in read_outcomes(path)] for path in reports}
        self.assertEqual(statuses, {name: [Status.PASSED] * count for name, count in EXAMPLE_TESTS.items()})

    def test_pytest_runs_the_example(self):
        # Every file under pytest, the rank classes included; the plugin comes by its entry point.
        result = self.run_in_project("-m", "pytest", "tests/", "-p", "no:cacheprovider",
                                     "--junitxml", "pytest-report.xml")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("plugins: torch_testing_ext-", result.stdout)
        outcomes = read_outcomes(self.project / "pytest-report.xml")
        self.assertEqual([o.status for o in outcomes], [Status.PASSED] * sum(EXAMPLE_TESTS.values()),
                         [(o.class_name, o.name, o.status) for o in outcomes])
        self.assertIn("TestOnKeptRanks", {o.class_name for o in outcomes})

    def test_the_driver_plans_the_example(self):
        listed = self.run_in_project("-m", "torch_testing_ext.run_test", "tests/", "--dry-run")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertEqual(len(re.findall(r"^\s+serial|^\s+parallel", listed.stdout, re.M)), 5, listed.stdout)
