"""The package's layout rules: unique module names, rooms that list their modules, and a
README layout section that lists every module (so none of them can drift)."""

import ast
import collections
import pathlib

import torch_testing_ext
from torch_testing_ext.common_utils import TestCase, run_tests

PACKAGE = pathlib.Path(torch_testing_ext.__file__).parent
README = PACKAGE.parent / "README.md"


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")


def readme_layout():
    text = README.read_text()
    start = text.index("## Layout")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


class TestLayout(TestCase):
    def test_no_two_modules_share_a_file_name(self):
        by_name = collections.defaultdict(list)
        for path in modules():
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

    def test_readme_layout_lists_every_module(self):
        layout = readme_layout()
        self.assertEqual([str(p.relative_to(PACKAGE)) for p in modules() if p.name not in layout], [])
        packages = [p.parent.name + "/" for p in PACKAGE.glob("*/__init__.py")]
        self.assertEqual([p for p in packages if p not in layout], [])

    def test_every_public_module_declares_all(self):
        lacking = [str(p.relative_to(PACKAGE)) for p in modules()
                   if not p.name.startswith("_") and "__all__" not in p.read_text()]
        self.assertEqual(lacking, [])


if __name__ == "__main__":
    run_tests()
