"""The package's layout rules: unique module names, rooms that list their modules, a README
layout section that lists every module (so none of them can drift), and the floors: every
import goes down a floor or stays inside its folder, as README's Layout orders them."""

import ast
import collections
import json
import os
import pathlib
import re
import subprocess
import sys

import torch_testing_ext
from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures.import_graph import import_graph

PACKAGE = pathlib.Path(torch_testing_ext.__file__).parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")


def readme_layout():
    """The Layout section, which lives in docs/architecture.md (README links to it)."""
    text = ARCHITECTURE.read_text()
    start = text.index("## Layout")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def readme_floors():
    """{room: floor} from README's Layout: a room is a top-level module or folder of the package,
    listed two spaces in under its ``floor N:`` line."""
    floors, floor = {}, None
    for line in readme_layout().splitlines():
        heading = re.match(r"^  floor (\d+):", line)
        if heading:
            floor = int(heading.group(1))
            continue
        entry = re.match(r"^  ([\w.]+/?)\s", line)
        if entry and floor is not None:
            floors[entry.group(1).removesuffix(".py")] = floor
    return floors


def room_of(module):
    """``torch_testing_ext.ranks.settings`` -> ``ranks/``; ``torch_testing_ext.devices`` -> ``devices``."""
    first = module.split(".")[1]
    return first + "/" if (PACKAGE / first).is_dir() else first


def rooms():
    return {room_of(module) for module in import_graph(PACKAGE) if module != "torch_testing_ext"}


def imports_against_floors(graph, floors):
    """Every import of one room by another that does not go down a floor."""
    wrong = []
    for module, imported in sorted(graph.items()):
        if module == "torch_testing_ext":
            continue
        for target in sorted(imported):
            here, there = room_of(module), room_of(target)
            if here != there and floors[there] >= floors[here]:
                direction = "up" if floors[there] > floors[here] else "sideways"
                wrong.append(f"{module} (floor {floors[here]}) imports {target} (floor {floors[there]}): {direction}")
    return wrong


class TestFloors(TestCase):
    def test_every_room_has_one_floor(self):
        floors = readme_floors()
        self.assertEqual(sorted(rooms() - set(floors)), [], "rooms missing from README's floors")
        self.assertEqual(sorted(set(floors) - rooms()), [], "README's floors name rooms that do not exist")

    def test_every_import_goes_down_a_floor_or_stays_in_its_folder(self):
        self.assertEqual(imports_against_floors(import_graph(PACKAGE), readme_floors()), [])

    def test_the_check_sees_an_import_up_and_one_sideways(self):
        graph = {"torch_testing_ext.ranks.settings": {"torch_testing_ext.devices"},
                 "torch_testing_ext.skips.platform_skips": {"torch_testing_ext.testcase.comparison"},
                 "torch_testing_ext.testcase.comparison": {"torch_testing_ext.testcase.temp_paths"}}
        floors = {"ranks/": 1, "devices": 2, "skips/": 3, "testcase/": 3}
        self.assertEqual(imports_against_floors(graph, floors), [
            "torch_testing_ext.ranks.settings (floor 1) imports torch_testing_ext.devices (floor 2): up",
            "torch_testing_ext.skips.platform_skips (floor 3) imports torch_testing_ext.testcase.comparison "
            "(floor 3): sideways"])

    def test_the_ground_floors_import_no_torch(self):
        floors = readme_floors()
        low = [module for module in import_graph(PACKAGE)
               if module != "torch_testing_ext" and floors[room_of(module)] <= 1]
        self.assertIn("torch_testing_ext.ranks.settings", low)
        code = ("import importlib, json, sys\n"
                f"for name in {low!r}: importlib.import_module(name)\n"
                "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')))")
        path = os.pathsep.join(filter(None, [str(PACKAGE.parent), os.environ.get("PYTHONPATH")]))
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                                env=dict(os.environ, PYTHONPATH=path))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout), [], "a floor 0 or 1 module imported torch")


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
