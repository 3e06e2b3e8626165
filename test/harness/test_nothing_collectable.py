"""No public function or class of the package is one pytest would collect as a test.

A test module that imports such a name (``from torch_testing_ext._engine.driver.runners import
test_command``) makes pytest collect it as a test of its own: ``fixture 'python' not found``.
pytest's default patterns collect module-level functions named ``test*`` and classes named
``Test*``, unless they say ``__test__ = False``. unittest.TestCase subclasses (``TestCase``
itself) are pytest's unittest collection instead, and collect only their test methods.

Every module of the package is imported in a child process (nothing is left imported here),
which prints what it finds; a module that cannot be imported is a failure too.
"""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from fixtures.runs import SHIPPED_SUITE_ENV, checkout_env

# python -c FIND PACKAGE: what pytest would collect among the package's public names, as JSON.
FIND = r"""
import importlib, inspect, json, pkgutil, sys, unittest

package = importlib.import_module(sys.argv[1])
found, broken = [], []
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    if info.name.endswith(".__main__"):
        continue  # python -m entry points run as they are imported
    try:
        module = importlib.import_module(info.name)
    except Exception as error:
        broken.append(f"{info.name}: {type(error).__name__}: {error}")
        continue
    if hasattr(module, "__shipped_suite__"):
        continue  # the installed torch's own suite: its names are torch's, as in torch's module
    if info.name.rsplit(".", 1)[-1].startswith("test_"):
        continue  # a test module of the package (the conformance kit's): its tests are meant to be collected
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__ or getattr(value, "__test__", True) is False:
            continue  # defined elsewhere (checked there), or says it is no test
        if inspect.isclass(value):
            if name.startswith("Test") and not issubclass(value, unittest.TestCase):
                found.append(f"class {info.name}.{name}")
        elif callable(value) and name.startswith("test"):
            found.append(f"function {info.name}.{name}")
print(json.dumps({"found": found, "broken": broken}))
"""

PROBE = """
import unittest

def test_like(python):
    pass

def not_a_test():
    pass

def test_marked():
    pass

test_marked.__test__ = False

class TestLike:
    pass

class TestMarked:
    __test__ = False

class TestCaseLike(unittest.TestCase):
    pass
"""


def collectable(package, *paths):
    """What FIND reports of ``package`` (importable from this checkout and ``paths``)."""
    result = subprocess.run([sys.executable, "-c", FIND, package], env=checkout_env(*paths, **SHIPPED_SUITE_ENV),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


class TestNothingCollectable(unittest.TestCase):
    def test_no_public_function_or_class_looks_like_a_test_to_pytest(self):
        report = collectable("torch_testing_ext")
        self.assertEqual(report["broken"], [], "modules that do not import")
        self.assertEqual(report["found"], [], "rename them, or set __test__ = False")

    def test_the_walk_finds_such_names(self):
        # The check above can fail: test-named functions and classes are found, the others not.
        with tempfile.TemporaryDirectory(prefix="collectable-") as directory:
            package = Path(directory, "collectable_probe")
            package.mkdir()
            (package / "__init__.py").write_text("")
            (package / "names.py").write_text(PROBE)
            report = collectable("collectable_probe", directory)
        self.assertEqual(report, {"found": ["function collectable_probe.names.test_like",
                                            "class collectable_probe.names.TestLike"], "broken": []})
