"""README's code cannot drift: every Python block is a complete test file that passes, and
every command of its shell blocks names a module or file that exists.

Each ```python block starts with a comment naming its file (``# test_first.py``); the test
writes it into a temporary directory and runs it as ``python FILE`` does: as ``__main__``, its
tests run by its own ``run_tests()`` with ``--save-xml``, whose report shows every test passed.
A block marked ``# test_x.py (pytest)`` is a pytest file: it runs under ``python -m pytest``
with ``--junitxml``, whose report shows every test passed.
The blocks run in two interpreters at once, each running its share one after another
(``fixtures/scripts_in_turn.py``: an interpreter start and ``import torch`` per file saved);
the launcher example also runs under ``torchrun --standalone --nproc-per-node 2``. Shell
blocks are not run (they install packages, start launchers across machines...), but each
``python -m MODULE`` must name an importable module and each path of this repository they
mention must exist.
"""

import importlib.util
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.driver.file_reports import read_outcomes
from torch_testing_ext.reporting.status import Status

from fixtures import scripts_in_turn
from fixtures.runs import checkout_env

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
LAUNCHED = "test_launched.py"  # also run under torchrun
INTERPRETERS = 2  # at once, each running its share of the blocks in turn


def blocks(language):
    """The text of every fenced block of ``language`` in README, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", README.read_text(), re.S | re.M)


PYTEST_MARK = "(pytest)"


def python_files():
    """{file name: source} of README's Python blocks."""
    files = {}
    for block in blocks("python"):
        first = block.splitlines()[0]
        name = first.removeprefix("# ").removesuffix(PYTEST_MARK).strip()
        files[name] = block
    return files


def is_pytest_file(source):
    """Whether a block is a pytest file (its first line ends with ``(pytest)``)."""
    return source.splitlines()[0].rstrip().endswith(PYTEST_MARK)


class TestPythonBlocks(TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.temp = tempfile.TemporaryDirectory(prefix="readme-")
        cls.dir = Path(cls.temp.name)
        cls.files = python_files()
        for name, source in cls.files.items():
            (cls.dir / name).write_text(source)

    @classmethod
    def tearDownClass(cls):
        cls.temp.cleanup()
        super().tearDownClass()

    def test_every_block_is_a_named_complete_test_file(self):
        self.assertEqual(len(self.files), len(blocks("python")), "two blocks share a file name")
        self.assertIn("test_first.py", self.files)
        for name, source in self.files.items():
            with self.subTest(name):
                self.assertRegex(name, r"^test_\w+\.py$", "a block starts with '# test_<name>.py'")
                self.assertRegex(source, r"(?m)^(import|from) ", "imports")
                if not is_pytest_file(source):
                    self.assertTrue(source.rstrip().endswith('if __name__ == "__main__":\n    run_tests()'),
                                    "ends with the run_tests() main block")

    def test_every_pytest_block_passes(self):
        names = [name for name, source in self.files.items() if is_pytest_file(source)]
        self.assertTrue(names, "README shows a pytest file")
        for name in names:
            with self.subTest(name):
                report = self.dir / f"{name}.xml"
                result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", name,
                                         f"--junitxml={report}"], cwd=self.dir, env=checkout_env(),
                                        capture_output=True, text=True, timeout=600)
                self.assertEqual(result.returncode, 0, result.stdout[-5000:])
                statuses = [outcome.status for outcome in read_outcomes(report)]
                self.assertTrue(statuses, f"{name} ran no test")
                self.assertEqual(set(statuses), {Status.PASSED}, "a README example did not pass (or skipped)")

    def test_every_block_passes(self):
        names = [name for name, source in self.files.items() if not is_pytest_file(source)]
        shares = [names[i::INTERPRETERS] for i in range(INTERPRETERS)]  # README order, dealt out
        reports = self.dir / "reports"

        def run(share):
            return subprocess.run([sys.executable, scripts_in_turn.__file__, str(reports), *share], cwd=self.dir,
                                  env=checkout_env(), capture_output=True, text=True, timeout=600)

        with ThreadPoolExecutor(INTERPRETERS) as pool:
            runs = list(pool.map(run, shares))
        for share, result in zip(shares, runs, strict=True):
            sections = dict(re.findall(r"^==> (\S+)\n(.*?^<== \1 exit .*?)$", result.stderr, re.S | re.M))
            for name in share:
                with self.subTest(name):
                    self.assertIn(name, sections, f"{name} did not run:\n{result.stderr[-3000:]}")
                    self.assertTrue(sections[name].endswith(f"<== {name} exit 0"), sections[name][-5000:])
                    statuses = [outcome.status for xml in sorted((reports / name[:-3]).glob("*.xml"))
                                for outcome in read_outcomes(xml)]
                    self.assertTrue(statuses, f"{name} ran no test")
                    self.assertEqual(set(statuses), {Status.PASSED}, "a README example did not pass (or skipped)")
            with self.subTest(interpreter=share):
                self.assertEqual(result.returncode, 0, result.stderr[-5000:])

    def test_the_launcher_example_passes_under_torchrun(self):
        self.assertIn(LAUNCHED, self.files)
        result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                                 "--nproc-per-node", "2", LAUNCHED, "-v"], cwd=self.dir, env=checkout_env(),
                                capture_output=True, text=True, timeout=600)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("test_all_reduce (__main__.TestOnLaunchedRanks.test_all_reduce) ... ok", result.stdout)


class TestShellBlocks(TestCase):
    def commands(self):
        return [line.split("#")[0].strip() for block in blocks("bash") for line in block.splitlines()
                if line.strip() and not line.lstrip().startswith("#")]

    def test_every_python_module_named_exists(self):
        modules = {m for command in self.commands() for m in re.findall(r"python -m ([\w.]+)", command)}
        self.assertIn("torch_testing_ext.run_test", modules)
        for module in sorted(modules):
            with self.subTest(module):
                self.assertIsNotNone(importlib.util.find_spec(module), f"no module {module}")

    def test_every_repository_path_named_exists(self):
        paths = {p for command in self.commands()
                 for p in re.findall(r"(?<![\w/.])((?:test|benchmarks|tools|examples|docs)/[\w/.-]*)", command)}
        self.assertIn("test/distributed/test_c10d_spawn_gloo.py", paths)
        for path in sorted(paths):
            with self.subTest(path):
                self.assertTrue((REPO / path).exists(), f"README names {path}, which does not exist")


if __name__ == "__main__":
    run_tests()
