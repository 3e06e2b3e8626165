"""``docs/migration.md`` lists, per upstream-mirrored module, exactly the names we provide
(the face's ``__all__``), and every face of the package has its row: the table cannot drift."""

import importlib
import os
import pathlib
import re
from unittest import mock

import torch_testing_ext
from torch_testing_ext.common_utils import TestCase

from fixtures.runs import SHIPPED_SUITE_ENV

PACKAGE = pathlib.Path(torch_testing_ext.__file__).parent
DOC = PACKAGE.parent / "docs" / "migration.md"
# Modules of ours at the top level that mirror no upstream module.
OURS = {"devices", "fake_ddp", "cpu_compat", "dtensor", "run_test", "collectives", "hf_bert", "many_worlds"}
ROW = re.compile(r"^\| `torch_testing_ext\.([\w.]+)` \| (.*) \|$")


def faces():
    """Dotted names (under torch_testing_ext) of every upstream-mirrored module."""
    found = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__" and p.stem not in OURS}
    return found | {".".join(p.relative_to(PACKAGE).with_suffix("").parts)
                    for p in (PACKAGE / "distributed").rglob("*.py") if p.stem != "__init__"}


def documented():
    rows = {}
    for line in DOC.read_text().splitlines():
        match = ROW.match(line)
        if match:
            rows[match.group(1)] = sorted(re.findall(r"`(\w+)`", match.group(2)))
    return rows


class TestMigrationDoc(TestCase):
    def test_every_face_has_a_row(self):
        self.assertEqual(sorted(faces() - set(documented())), [])

    def test_each_row_lists_exactly_the_faces_names(self):
        for module, names in documented().items():
            with self.subTest(module=module):
                with mock.patch.dict(os.environ, SHIPPED_SUITE_ENV):
                    face = importlib.import_module(f"torch_testing_ext.{module}")
                self.assertEqual(names, sorted(face.__all__))
