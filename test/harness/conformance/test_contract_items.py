"""The contract's items: the registry is well formed, and gloo keeps every promise its manifest makes.

In process: item ids are unique and of the form ``area.op`` or ``area.op[REDUCE-dtype]``, every
area has items, every item has a docstring, its dtype and reduce op are the contract's, and
``items/__init__.py`` names each item module. Then ONE run of ``python -m
torch_testing_ext.conformance --backend gloo --world-sizes 2 --report X.json``: it exits 0, and
the report shows every item gloo's manifest claims run and passed, area by area.
"""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from torch_testing_ext._engine.conformance import items as items_package
from torch_testing_ext._engine.conformance.claims import load_claims
from torch_testing_ext._engine.conformance.items import all_items as items
from torch_testing_ext._engine.conformance.vocabulary import AREAS, DTYPES, REDUCE_OPS
from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures.paths import REPO
from fixtures.runs import checkout_env

ID = re.compile(r"^(?P<area>[a-z0-9]+)\.(?P<op>[a-z0-9_]+)(\[(?P<detail>[A-Za-z0-9-]+)\])?$")


class TestRegistry(TestCase):
    def test_ids_are_well_formed_and_say_the_items_area_op_dtype_and_reduce_op(self):
        registry = items()
        self.assertGreater(len(registry), 100)
        for item_id, item in registry.items():
            match = ID.match(item_id)
            self.assertIsNotNone(match, item_id)
            self.assertEqual(item.id, item_id)
            self.assertEqual(match["area"], item.area, item_id)
            self.assertIn(item.area, AREAS, item_id)
            detail = "-".join(part for part in (item.reduce_op, item.dtype) if part)
            self.assertEqual(match["detail"] or "", detail, item_id)
            self.assertTrue(item.dtype is None or item.dtype in DTYPES, item_id)
            self.assertTrue(item.reduce_op is None or item.reduce_op in REDUCE_OPS, item_id)
            self.assertIn(item.min_world_size, (2, 3, 4), item_id)
        self.assertEqual(len({item_id.lower() for item_id in registry}), len(registry), "ids differ only in case")

    def test_every_area_has_items(self):
        counts = {area: 0 for area in AREAS}
        for item in items().values():
            counts[item.area] += 1
        self.assertEqual([area for area, count in counts.items() if count == 0], [])

    def test_every_item_has_a_docstring_whose_first_line_states_the_promise(self):
        for item_id, item in items().items():
            self.assertGreater(len(item.doc), 20, item_id)
            self.assertTrue(item.doc.endswith("."), f"{item_id}: {item.doc!r}")

    def test_bitwise_ops_only_on_integers_and_bool(self):
        for item_id, item in items().items():
            if item.reduce_op in ("BAND", "BOR", "BXOR"):
                self.assertIn(item.dtype, ("int8", "uint8", "int32", "int64", "bool"), item_id)

    def test_the_package_docstring_names_each_item_module(self):
        folder = Path(items_package.__file__).parent
        modules = sorted(path.stem for path in folder.glob("*_items.py"))
        self.assertGreaterEqual(len(modules), len(AREAS))
        for module in modules:
            self.assertIn(f"``{module}``", items_package.__doc__, module)
        names = [path.name for path in (REPO / "torch_testing_ext").rglob("*.py")]
        for module in modules:
            self.assertEqual(names.count(f"{module}.py"), 1, f"{module}.py is not unique in the package")


class TestGlooKeepsItsClaims(TestCase):
    """ONE run of the kit on gloo at world size 2."""

    def test_every_claimed_item_passes(self):
        claims = load_claims("gloo")
        claimed: dict[str, int] = {area: 0 for area in AREAS}
        for item in items().values():
            if item.min_world_size <= 2 and claims.reason_not_claimed(item.id, item.area, item.dtype,
                                                                      item.reduce_op) is None:
                claimed[item.area] += 1
        with tempfile.TemporaryDirectory() as temp:
            report_path = Path(temp) / "report.json"
            env = checkout_env(PYTHONPATH=str(REPO))
            result = subprocess.run(
                [sys.executable, "-m", "torch_testing_ext.conformance", "--backend", "gloo", "--world-sizes", "2",
                 "--report", str(report_path)],
                cwd=temp, env=env, capture_output=True, text=True, timeout=120)
            output = result.stdout[-3000:] + result.stderr[-3000:]
            self.assertEqual(result.returncode, 0, output)
            report = json.loads(report_path.read_text())
        self.assertIs(report["passed"], True, output)
        self.assertEqual(report["failures"], [], output)
        self.assertEqual(report["backend"], "gloo")
        self.assertEqual(report["world_sizes"], [2])
        for area, expected in claimed.items():
            counts = report["areas"][area]
            self.assertEqual(counts["claimed"], expected, area)
            self.assertEqual(counts["passed"], expected, area)
            self.assertEqual(counts["failed"], 0, area)
        self.assertGreater(sum(claimed.values()), 100)
        for area in claims.areas:
            self.assertGreater(claimed[area], 0, f"gloo claims {area} yet no item of it ran")
        reasons = {entry["item"]: entry["reason"] for entry in report["not_claimed"]}
        self.assertIn("collectives.all_to_all[float32]", reasons)
        self.assertNotIn("collectives.all_to_all_even[float32]", reasons)


if __name__ == "__main__":
    run_tests()
