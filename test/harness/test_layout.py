"""The package's layout rules: unique module names, folders that list their modules, a Layout
section (docs/architecture.md) that lists every module and folder (so none can drift), and the
modules it marks ``[torch-free]`` import no torch (no import cycle: driver/test_imports_no_torch.py)."""

import ast
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import unittest

import torch_testing_ext

PACKAGE = pathlib.Path(torch_testing_ext.__file__).parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")


def layout():
    """The Layout section, which lives in docs/architecture.md (README links to it)."""
    text = ARCHITECTURE.read_text()
    start = text.index("## Layout")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def torch_free_modules():
    """Dotted names of the modules the Layout marks ``[torch-free]``: each line names a file, and
    the lines above it at smaller indents name its folders."""
    names, folders = [], []
    for line in layout().splitlines():
        entry = re.match(r"^( *)([\w.]+/?)\s", line)
        if not entry or entry.group(2) == "torch_testing_ext/":
            continue
        depth = len(entry.group(1)) // 2 - 1
        folders = folders[:depth]
        if entry.group(2).endswith("/"):
            folders.append(entry.group(2).rstrip("/"))
        elif line.rstrip().endswith("[torch-free]"):
            names.append(".".join(["torch_testing_ext", *folders, entry.group(2).removesuffix(".py")]))
    return names


def imported_torch(names):
    """The ``torch`` modules that importing ``names`` in a fresh interpreter brings in."""
    code = ("import importlib, json, sys\n"
            f"for name in {names!r}: importlib.import_module(name)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')))")
    path = os.pathsep.join(filter(None, [str(PACKAGE.parent), os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=path))
    if result.returncode:
        raise AssertionError(result.stderr)
    return json.loads(result.stdout)


class TestImports(unittest.TestCase):
    def test_the_modules_marked_torch_free_import_no_torch(self):
        marked = torch_free_modules()
        self.assertIn("torch_testing_ext._engine.worlds.outcomes", marked)
        self.assertIn("torch_testing_ext.pytest_plugin.plugin", marked)
        self.assertEqual(imported_torch(marked), [], "a module marked [torch-free] imported torch")

    def test_fresh_ranks_know_nothing_of_pytest(self):
        # pytest's ranks ask the fork server for what they need (fork_server.WarmUp).
        named = [f"{path.name}: {name}" for path in sorted((PACKAGE / "_engine" / "fresh").glob("*.py"))
                 for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, (ast.Import, ast.ImportFrom))
                 for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
                 if name.split(".")[0] == "pytest" or "pytest_native" in name]
        self.assertEqual(named, [])

    def test_the_check_sees_a_module_that_imports_torch(self):
        self.assertIn("torch", imported_torch(["torch_testing_ext._engine.ledger.recording"]))


class TestLayout(unittest.TestCase):
    def test_no_two_modules_share_a_file_name(self):
        # Faces under distributed/ keep upstream's paths, whatever their names (torch itself has
        # distributed/rpc/rpc_test.py and distributed/rpc/jit/rpc_test.py).
        by_name = collections.defaultdict(list)
        # and ``__main__.py``, whose name Python's ``-m`` fixes.
        for path in modules():
            if path.relative_to(PACKAGE).parts[0] != "distributed" and path.name != "__main__.py":
                by_name[path.name].append(str(path.relative_to(PACKAGE)))
        self.assertEqual({name: paths for name, paths in by_name.items() if len(paths) > 1}, {})

    def test_every_subpackage_docstring_names_its_modules(self):
        missing = []
        for init in sorted(PACKAGE.rglob("__init__.py")):
            if init.parent == PACKAGE:
                continue
            doc = ast.get_docstring(ast.parse(init.read_text())) or ""
            missing += [str(p.relative_to(PACKAGE)) for p in init.parent.glob("*.py")
                        if p.name != "__init__.py" and f"``{p.stem}``" not in doc]
        self.assertEqual(missing, [])

    def test_the_layout_lists_every_module_and_folder(self):
        listed = layout()
        self.assertEqual([str(p.relative_to(PACKAGE)) for p in modules() if p.name not in listed], [])
        packages = [p.parent.name + "/" for p in PACKAGE.rglob("*/__init__.py") if p.parent != PACKAGE]
        self.assertEqual([p for p in packages if p not in listed], [])

    def test_every_public_module_declares_all(self):
        lacking = [str(p.relative_to(PACKAGE)) for p in modules()
                   if "_engine" not in p.parts and not p.name.startswith("_") and "__all__" not in p.read_text()]
        self.assertEqual(lacking, [])
