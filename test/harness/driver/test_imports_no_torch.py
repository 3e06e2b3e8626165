"""The package's imports form no cycle, the shard driver never imports torch, and neither do
the self-tests whose test process needs none.

The import graph is read from the source with ``ast`` (every import: relative and absolute,
inside functions and under ``TYPE_CHECKING``). The torch check runs the driver for real, in a
fresh interpreter, on a tiny tree of plain ``unittest`` files. The self-tests listed in
``TORCH_FREE_SELF_TESTS`` are plain ``unittest.TestCase`` files of torch-free modules: loaded
in a fresh interpreter, as pytest loads them, none may import torch (the driver runs each file
in a process of its own, and ``import torch`` would cost each of them more than a second).
"""

import ast
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

from fixtures.import_graph import find_cycle, import_graph
from fixtures.paths import HARNESS, REPO
from fixtures.runs import checkout_env

PACKAGE = REPO / "torch_testing_ext"


def driver_order():
    """The driver's modules in the order its package docstring lists them."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "_engine" / "driver" / "__init__.py").read_text()))
    return [line.split("``")[1] for line in doc.splitlines() if line.startswith("- ``")]


class TestImportGraph(unittest.TestCase):
    def test_package_has_no_import_cycle(self):
        graph = import_graph(PACKAGE)
        self.assertIn("torch_testing_ext._engine.driver.usage", graph["torch_testing_ext._engine.driver.cli"])
        cycle = find_cycle(graph)
        if cycle:
            self.fail("import cycle: " + " -> ".join(cycle))

    def test_driver_modules_import_only_modules_listed_above_them(self):
        order = driver_order()
        prefix = "torch_testing_ext._engine.driver."
        graph = import_graph(PACKAGE)
        listed = sorted(name[len(prefix):] for name in graph if name.startswith(prefix))
        self.assertEqual(sorted(order), listed, "_engine/driver/__init__.py must list every module")
        for position, module in enumerate(order):
            for imported in sorted(graph[prefix + module]):
                if imported.startswith(prefix):
                    self.assertIn(imported[len(prefix):], order[:position],
                                  f"driver.{module} imports {imported}, listed below it")

    def test_the_checker_sees_hidden_imports(self):
        # A cycle made only of a TYPE_CHECKING import and an import inside a function.
        with tempfile.TemporaryDirectory(prefix="import-graph-") as temp:
            package = Path(temp) / "pkg"
            (package / "sub").mkdir(parents=True)
            (package / "__init__.py").write_text("")
            (package / "sub" / "__init__.py").write_text("from . import b\n")
            (package / "a.py").write_text(
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub.b import B\n")
            (package / "sub" / "b.py").write_text("def f():\n    from ..a import A\n")
            graph = import_graph(package)
            self.assertEqual(graph, {"pkg": set(), "pkg.a": {"pkg.sub.b"}, "pkg.sub": {"pkg.sub.b"},
                                     "pkg.sub.b": {"pkg.a"}})
            self.assertEqual(find_cycle(graph), ["pkg.a", "pkg.sub.b", "pkg.a"])


# A test file that needs nothing but unittest, yet speaks the driver's protocol: --list prints
# its test ids, --save-xml DIR writes a JUnit report of the selected tests. Its entry is named
# run_tests, as the driver runs a file as a script only when its __main__ calls run_tests().
FIXTURE = """
import os, sys, time, unittest
import xml.etree.ElementTree as ET

{classes}

def _tests(suite):
    for item in suite:
        yield from _tests(item) if isinstance(item, unittest.TestSuite) else [item]

def main(args):
    every = list(_tests(unittest.defaultTestLoader.loadTestsFromModule(sys.modules["__main__"])))
    if args == ["--list"]:
        print("\\n".join(test.id() for test in every))
        return 0
    where = args.index("--save-xml")
    selection, report_dir = args[:where], args[where + 1]
    suite = ET.Element("testsuite", name=os.path.basename(__file__))
    for test in every:
        cls, name = type(test).__name__, test._testMethodName
        if selection and cls not in selection and f"{{cls}}.{{name}}" not in selection:
            continue
        result, started = unittest.TestResult(), time.monotonic()
        test.run(result)
        ET.SubElement(suite, "testcase", classname=cls, name=name,
                      time=f"{{time.monotonic() - started:.3f}}")
    os.makedirs(report_dir, exist_ok=True)
    ET.ElementTree(suite).write(os.path.join(report_dir, "report.xml"))
    return 0

def run_tests():
    sys.exit(main(sys.argv[1:]))

if __name__ == "__main__":
    run_tests()
"""

ALPHA = """
class TestA1(unittest.TestCase):
    def test_one(self):
        pass

    def test_two(self):
        pass

class TestA2(unittest.TestCase):
    def test_three(self):
        pass
"""

BETA = """
class TestB(unittest.TestCase):
    def test_four(self):
        pass
"""

# test_alpha is long enough to be split in two shards: planning lists its tests.
TIMES = {"version": 1, "files": {"test_alpha": 500.0, "test_beta": 5.0},
         "classes": {"test_alpha": {"TestA1": 250.0, "TestA2": 240.0}}}

# Runs in a fresh interpreter: plan, run, update the times and summarise; then report whether
# anything imported torch.
DRIVER_RUN = """
import contextlib, io, json, sys
from pathlib import Path

from torch_testing_ext._engine.driver import cli, report
from torch_testing_ext._engine.driver.plan import PlanEntry
from torch_testing_ext._engine.driver.results import Attempt, EntryResult
from torch_testing_ext._engine.reporting.status import Status

root = Path(sys.argv[1])

def main(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["--test-dir", str(root / "test"), *args], root=root)
    return code, out.getvalue()

reports = root / "reports"
steps = {"dry_run": main("--dry-run", "--shard", "1", "2"), "run": main("--save-xml", str(reports)),
         "update": main("--update-times", str(reports))}
crash = EntryResult(PlanEntry("test_alpha"), Attempt(Status.DIED, -11, 1.0, []))
steps["summary"] = (0, report.summary_text([crash], [], 1.0, lambda name, selection: name))
torch = sorted(name for name in sys.modules if name == "torch" or name.startswith("torch."))
print(json.dumps({"steps": steps, "torch": torch}))
"""


class TestDriverWithoutTorch(unittest.TestCase):
    def python(self, code, *args, cwd=None):
        path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        result = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True,
                                text=True, timeout=120, env=dict(os.environ, PYTHONPATH=path))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return json.loads(result.stdout.splitlines()[-1])

    def test_importing_the_driver_package_imports_none_of_its_modules(self):
        loaded = self.python("import json, sys, torch_testing_ext._engine.driver\n"
                             "print(json.dumps(sorted(sys.modules)))")
        self.assertEqual([m for m in loaded if m.startswith("torch_testing_ext._engine.driver.")], [])

    def test_planning_running_and_updating_times_import_no_torch(self):
        with tempfile.TemporaryDirectory(prefix="driver-no-torch-") as temp:
            root = Path(temp)
            (root / "test").mkdir()
            for name, classes in (("test_alpha", ALPHA), ("test_beta", BETA)):
                body = FIXTURE.format(classes=textwrap.dedent(classes).strip())
                (root / "test" / f"{name}.py").write_text(body)
            (root / ".test-times.json").write_text(json.dumps(TIMES))
            found = self.python(DRIVER_RUN, str(root), cwd=root)
            updated = json.loads((root / ".test-times.json").read_text())
        steps = {step: tuple(value) for step, value in found["steps"].items()}
        self.assertEqual({step: code for step, (code, _) in steps.items()},
                         {"dry_run": 0, "run": 0, "update": 0, "summary": 0}, steps)
        self.assertIn("test_alpha [TestA", steps["dry_run"][1])  # the tests were listed
        self.assertIn("summary: 4 passed, 0 failed", steps["run"][1])
        self.assertEqual(sorted(updated["classes"]["test_alpha"]), ["TestA1", "TestA2"])
        self.assertIn("killed by SIGSEGV without a failed test", steps["summary"][1])
        self.assertEqual(found["torch"], [], "the driver imported torch")


# The self-tests (paths under test/harness) whose test process imports no torch: each subclasses
# unittest.TestCase, not the package's TestCase (whose tensor-aware asserts import torch).
TORCH_FREE_SELF_TESTS = [
    "benchmarks/test_ledger_side_by_side.py",
    "driver/test_cli.py",
    "driver/test_discover.py",
    "driver/test_execute.py",
    "driver/test_imports_no_torch.py",
    "driver/test_paths.py",
    "driver/test_plan.py",
    "driver/test_report.py",
    "driver/test_runners.py",
    "driver/test_times.py",
    "process_tree/test_proc_table.py",
    "pytest_plugin/test_plugin.py",
    "test_imports.py",
    "test_layout.py",
    "test_nothing_collectable.py",
    "tools/test_torch_matrix.py",
    "worlds/test_outcomes.py",
]

# python -c LOAD HARNESS FILE...: load each file as pytest does (test/harness first on sys.path,
# as its conftest.py puts it) and print, per file, the torch modules its loading brought in.
LOAD = """
import importlib.util, json, sys
from pathlib import Path

harness = Path(sys.argv[1])
sys.path.insert(0, str(harness))
brought = {}
for number, name in enumerate(sys.argv[2:]):
    before = set(sys.modules)
    spec = importlib.util.spec_from_file_location(f"self_test_{number}", harness / name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    brought[name] = sorted(m for m in set(sys.modules) - before if m.split(".")[0] == "torch")
print(json.dumps(brought))
"""


class TestSelfTestsWithoutTorch(unittest.TestCase):
    def test_loading_the_torch_free_self_tests_imports_no_torch(self):
        with tempfile.TemporaryDirectory(prefix="self-tests-no-torch-") as temp:
            # The check's own check: a file that brings in a (stand-in) torch is named.
            imports_torch = Path(temp, "test_imports_torch.py")
            imports_torch.write_text("import sys, types\nsys.modules['torch'] = types.ModuleType('torch')\n")
            result = subprocess.run([sys.executable, "-c", LOAD, str(HARNESS), *TORCH_FREE_SELF_TESTS,
                                     str(imports_torch)], capture_output=True, text=True, timeout=120,
                                    env=checkout_env())
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        brought = json.loads(result.stdout.splitlines()[-1])
        self.assertEqual(brought.pop(str(imports_torch)), ["torch"])
        self.assertEqual(sorted(brought), sorted(TORCH_FREE_SELF_TESTS))
        self.assertEqual({name: torch for name, torch in brought.items() if torch}, {},
                         "a self-test listed as torch-free imported torch")
