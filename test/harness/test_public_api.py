"""The public API is what ``docs/api.md`` lists, and nothing else: every public module (one not
under ``torch_testing_ext._engine``) has its heading there with exactly the names of its
``__all__``, and the pytest fixtures the plugin adds are the ones the page names."""

import importlib
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from unittest import mock

import torch_testing_ext
from torch_testing_ext.common_utils import TestCase

from fixtures.runs import SHIPPED_SUITE_ENV, checkout_env

PACKAGE = pathlib.Path(torch_testing_ext.__file__).parent
API = PACKAGE.parent / "docs" / "api.md"
HEADING = re.compile(r"^### `(torch_testing_ext[\w.]*)`$")


def public_modules():
    """Dotted names of the package's modules outside ``_engine`` (``__main__`` scripts aside)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if "_engine" in parts or parts[-1] == "__main__":
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def exported():
    """{module: its ``__all__``} for every public module that declares one."""
    found = {}
    for name in public_modules():
        with mock.patch.dict(os.environ, SHIPPED_SUITE_ENV):
            module = importlib.import_module(name)
        names = getattr(module, "__all__", None)
        if names is not None:
            found[name] = list(names)
    return found


def documented(text):
    """{module: the names listed under its ``### `module``` heading} of the page's text."""
    found, current = {}, None
    for line in text.splitlines():
        heading = HEADING.match(line)
        if heading:
            current = found.setdefault(heading.group(1), [])
        elif line.startswith("#"):
            current = None
        elif current is not None:
            current += re.findall(r"`(\w+)`", line)
    return found


def differences(exports, docs):
    """What the page and the package disagree on, one line each."""
    lines = [f"{module}: exported, not on the page" for module in sorted(set(exports) - set(docs))]
    lines += [f"{module}: on the page, no such public module" for module in sorted(set(docs) - set(exports))]
    for module in sorted(set(exports) & set(docs)):
        missing = sorted(set(exports[module]) - set(docs[module]))
        extra = sorted(set(docs[module]) - set(exports[module]))
        if missing:
            lines.append(f"{module}: exports {missing}, not on the page")
        if extra:
            lines.append(f"{module}: the page lists {extra}, not exported")
    return lines


class TestPublicApi(TestCase):
    def test_the_page_lists_exactly_what_the_package_exports(self):
        self.assertEqual(differences(exported(), documented(API.read_text())), [])

    def test_every_public_module_with_code_declares_all(self):
        lacking = [name for name in public_modules()
                   if name not in exported() and not (PACKAGE.parent / name.replace(".", "/")).is_dir()]
        self.assertEqual(lacking, [])

    def test_the_check_sees_a_name_or_module_missing_or_extra(self):
        page = "### `torch_testing_ext.a`\n\n`x`, `y`\n\n### `torch_testing_ext.gone`\n\n`z`\n"
        self.assertEqual(differences({"torch_testing_ext.a": ["x", "w"], "torch_testing_ext.b": []},
                                     documented(page)), [
            "torch_testing_ext.b: exported, not on the page",
            "torch_testing_ext.gone: on the page, no such public module",
            "torch_testing_ext.a: exports ['w'], not on the page",
            "torch_testing_ext.a: the page lists ['y'], not exported"])

    def test_the_plugin_adds_exactly_the_fixtures_the_page_names(self):
        with tempfile.TemporaryDirectory(prefix="tte-fixtures-") as empty:
            listing = subprocess.run([sys.executable, "-m", "pytest", "--fixtures", "-p", "no:cacheprovider"],
                                     cwd=empty, capture_output=True, text=True, timeout=120,
                                     env=checkout_env()).stdout
        section = re.search(r"-+ fixtures defined from (torch_testing_ext\S*) -+\n(.*?)(?:\n-+ |\n=+|\Z)",
                            listing, re.S)
        self.assertIsNotNone(section, listing[-2000:])
        fixtures = sorted(re.findall(r"^(\w+)(?: \[.*?\])? -- ", section.group(2), re.M))
        self.assertIn("rank", fixtures)
        page = API.read_text()
        what_a_test_writes = page[page.index("## What a test writes"):page.index("## Our modules")]
        named = re.search(r"the fixtures (.*?)\(\[", what_a_test_writes, re.S).group(1)
        self.assertEqual(sorted(re.findall(r"`(\w+)`", named)), fixtures)
