"""The README's and the docs' code cannot drift: every Python block is a complete test file that
passes, every command of their shell blocks names a module or file that exists, and every link
between them leads to a file and a heading that exist.

The documents are README.md and every ``docs/*.md``. Each ```python block starts with a comment
naming its file (``# test_first.py``), a name no other block of any document uses; the test
writes it into a temporary directory and runs it as ``python FILE`` does: as ``__main__``, its
tests run by its own ``run_tests()`` with ``--save-xml``, whose report shows every test passed.
A block marked ``# test_x.py (pytest)`` is a pytest file: it runs under ``python -m pytest``
with ``--junitxml``, whose report shows every test passed.
The blocks run in two interpreters at once, each running its share one after another
(``fixtures/scripts_in_turn.py``: an interpreter start and ``import torch`` per file saved);
the launcher example also runs under ``torchrun --standalone --nproc-per-node 2``. Shell
blocks are not run (they install packages, start launchers across machines...), but each
``python -m MODULE`` must name an importable module and each path of this repository they
mention must exist. README's command (b) is what ``.ci/run`` runs, and the README fits a first
read (at most 300 lines).
"""

import importlib.util
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from importlib.machinery import PathFinder
from pathlib import Path

from torch_testing_ext.common_utils import TestCase

from fixtures import scripts_in_turn
from fixtures.paths import REPO
from fixtures.runs import checkout_env

README = REPO / "README.md"
README_LINES = 300  # at most: a first read
LAUNCHED = "test_launched.py"  # also run under torchrun
INTERPRETERS = 2  # at once, each running its share of the blocks in turn
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)


def documents():
    """README.md, then every docs/*.md: the documents whose blocks and links are checked."""
    return [README, *sorted((REPO / "docs").glob("*.md"))]


def name_of(document):
    return document.relative_to(REPO).as_posix()


def blocks(language):
    """(document, text) of every fenced block of ``language`` in the documents, in order."""
    return [(document, text) for document in documents()
            for lang, text in FENCE.findall(document.read_text()) if lang == language]


PYTEST_MARK = "(pytest)"


def python_files():
    """{file name: [(document, source), ...]} of the documents' Python blocks (one each, unless
    two blocks share a name)."""
    files = {}
    for document, block in blocks("python"):
        first = block.splitlines()[0]
        name = first.removeprefix("# ").removesuffix(PYTEST_MARK).strip()
        files.setdefault(name, []).append((document, block))
    return files


def outcomes(report):
    """The outcome of every ``<testcase>`` of a JUnit report: ``passed``, or the tag of what it
    holds instead (``failure``, ``error`` or ``skipped``)."""
    return [next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
            for case in ET.parse(report).iter("testcase")]


def is_pytest_file(source):
    """Whether a block is a pytest file (its first line ends with ``(pytest)``)."""
    return source.splitlines()[0].rstrip().endswith(PYTEST_MARK)


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation other than ``-`` and ``_``
    dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text):
    """The anchors of a Markdown text's headings (outside code blocks); a repeated heading's
    anchor gets ``-1``, ``-2``... as on GitHub."""
    seen, found = {}, set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", FENCE.sub("", text), re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


LINK = re.compile(r"\]\(([^()\s]+)\)")


def broken_links(paths, root):
    """``document: target: why`` for every link of the Markdown files ``paths`` (outside code
    blocks) that leads to no file under ``root``, or to a heading its file lacks."""
    broken = []
    for document in paths:
        for target in LINK.findall(FENCE.sub("", document.read_text())):
            if re.match(r"^[a-z]+:", target):  # https:, mailto:...
                continue
            path, _, anchor = target.partition("#")
            linked = (document.parent / path).resolve() if path else document
            where = f"{document.relative_to(root).as_posix()}: {target}"
            if not linked.is_relative_to(root.resolve()) or not linked.exists():
                broken.append(f"{where}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
                broken.append(f"{where}: no such heading")
    return broken


class TestPythonBlocks(TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.temp = tempfile.TemporaryDirectory(prefix="readme-")
        cls.dir = Path(cls.temp.name)
        cls.found = python_files()
        cls.files = {name: found[0][1] for name, found in cls.found.items()}
        for name, source in cls.files.items():
            (cls.dir / name).write_text(source)

    @classmethod
    def tearDownClass(cls):
        cls.temp.cleanup()
        super().tearDownClass()

    def test_every_block_is_a_named_complete_test_file(self):
        shared = {name: [name_of(document) for document, _ in found]
                  for name, found in self.found.items() if len(found) > 1}
        self.assertEqual(shared, {}, "blocks share a file name")
        self.assertEqual(self.found["test_first.py"][0][0], README, "the README shows the first test")
        for name, source in self.files.items():
            with self.subTest(name):
                self.assertRegex(name, r"^test_\w+\.py$", "a block starts with '# test_<name>.py'")
                self.assertRegex(source, r"(?m)^(import|from) ", "imports")
                if not is_pytest_file(source):
                    self.assertTrue(source.rstrip().endswith('if __name__ == "__main__":\n    run_tests()'),
                                    "ends with the run_tests() main block")

    def test_every_pytest_block_passes(self):
        names = [name for name, source in self.files.items() if is_pytest_file(source)]
        self.assertTrue(names, "the docs show a pytest file")
        for name in names:
            with self.subTest(name):
                report = self.dir / f"{name}.xml"
                result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", name,
                                         f"--junitxml={report}"], cwd=self.dir, env=checkout_env(),
                                        capture_output=True, text=True, timeout=600)
                self.assertEqual(result.returncode, 0, result.stdout[-5000:])
                found = outcomes(report)
                self.assertTrue(found, f"{name} ran no test")
                self.assertEqual(set(found), {"passed"}, "an example of the docs did not pass (or skipped)")

    def test_every_block_passes(self):
        names = [name for name, source in self.files.items() if not is_pytest_file(source)]
        shares = [names[i::INTERPRETERS] for i in range(INTERPRETERS)]  # the documents' order, dealt out
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
                    found = [outcome for xml in sorted((reports / name[:-3]).glob("*.xml"))
                             for outcome in outcomes(xml)]
                    self.assertTrue(found, f"{name} ran no test")
                    self.assertEqual(set(found), {"passed"}, "an example of the docs did not pass (or skipped)")
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
        """(document, command) of every command line of the documents' shell blocks."""
        return [(document, line.split("#")[0].strip()) for document, block in blocks("bash")
                for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]

    def test_every_python_module_named_exists(self):
        modules = {module: document for document, command in self.commands()
                   for module in re.findall(r"python -m ([\w.]+)", command)}
        self.assertIn("torch_testing_ext.run_test", modules)
        for module, document in sorted(modules.items()):
            with self.subTest(module):
                # Found on sys.path without the meta-path hooks: setuptools' distutils hook, asked
                # for "pip", turns its own distutils off for the rest of this process.
                found = importlib.util.find_spec(module) if "." in module else PathFinder.find_spec(module)
                self.assertIsNotNone(found, f"{name_of(document)}: no module {module}")

    def test_every_repository_path_named_exists(self):
        paths = {path: document for document, command in self.commands()
                 for path in re.findall(r"(?<![\w/.])((?:test|benchmarks|tools|examples|docs)/[\w/.-]*)", command)}
        self.assertIn("test/distributed/test_c10d_spawn_gloo.py", paths)
        for path, document in sorted(paths.items()):
            with self.subTest(path):
                self.assertTrue((REPO / path).exists(), f"{name_of(document)} names {path}, which does not exist")

    def test_ci_runs_the_readme_command_b(self):
        readme = [command for document, command in self.commands() if document == README]
        (b,) = [command for command in readme if command.startswith("python -m venv") and "ruff" in command]
        ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
              if line.strip() and not line.startswith(("#", "set ", "cd "))]
        self.assertEqual(ci, b.split(" && "))


class TestDocuments(TestCase):
    def test_the_readme_fits_a_first_read(self):
        self.assertLessEqual(len(README.read_text().splitlines()), README_LINES)

    def test_every_link_leads_to_a_file_and_heading(self):
        self.assertGreater(len(LINK.findall(README.read_text())), 10)
        self.assertEqual(broken_links(documents(), REPO), [])

    def test_the_link_check_sees_a_missing_file_and_a_missing_heading(self):
        with tempfile.TemporaryDirectory() as temp:
            root = Path(temp)
            (root / "docs").mkdir()
            (root / "docs" / "guide.md").write_text("# Guide\n\n## `TestCase`: asserts\n\n## Run\n\n## Run\n")
            (root / "README.md").write_text(
                "[a](docs/guide.md#testcase-asserts) [b](docs/guide.md#run-1) [c](#top) [d](https://x.org/y)\n"
                "[e](docs/missing.md) [f](docs/guide.md#no-such) [g](../outside.md)\n\n"
                "```\n[in a block](nowhere.md)\n```\n\n# Top\n")
            self.assertEqual(broken_links([root / "README.md", root / "docs" / "guide.md"], root), [
                "README.md: docs/missing.md: no such file",
                "README.md: docs/guide.md#no-such: no such heading",
                "README.md: ../outside.md: no such file"])
