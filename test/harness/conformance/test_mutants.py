"""The conformance kit catches planted bugs: ten mutants of the example backend, each with one.

For each mutant of ``fixtures/c10d_mutants.py`` (SUM as MAX, a dropped uneven split, a wrong
root, all_gather in reverse order, an off-by-one peer, a swallowed error, ``wait()`` before the
data, the wrong reduce_scatter chunk, a barrier that does not wait, float64 summed in float32)
the kit runs on 3 ranks, only on the items that concern it (``--only AREA -k EXPRESSION``), and
must fail, reporting the failure in the mutant's area. The unmutated example backend passes the
same items and the areas it claims beside them.
"""

import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures.paths import REPO
from fixtures.runs import checkout_env

EXAMPLE = REPO / "examples" / "c10d_backend"
FIXTURES = REPO / "test" / "harness" / "fixtures"


def mutants():
    """The table of mutants (importing it needs the example backend on the path)."""
    if str(EXAMPLE) not in sys.path:
        sys.path.append(str(EXAMPLE))
    return importlib.import_module("fixtures.c10d_mutants").MUTANTS


def run_kit(backend, *args):
    """``python -m torch_testing_ext.conformance`` on 3 ranks: (exit status, JSON report, output)."""
    with tempfile.TemporaryDirectory(prefix="kit-mutant-") as folder:
        report = Path(folder) / "report.json"
        result = subprocess.run(
            [sys.executable, "-m", "torch_testing_ext.conformance", "--backend", backend, "--import", "c10d_mutants",
             "--world-sizes", "3", "--item-timeout", "5", "--report", str(report), *args],
            env=checkout_env(PYTHONPATH=os.pathsep.join([str(REPO), str(FIXTURES), str(EXAMPLE)])),
            capture_output=True, text=True, timeout=300)
        return result.returncode, json.loads(report.read_text()) if report.exists() else {}, \
            result.stdout + result.stderr


class TestMutants(TestCase):
    def test_every_planted_bug_is_caught_in_its_area(self):
        self.assertGreaterEqual(len(mutants()), 10)
        for name, (_group, area, select) in mutants().items():
            with self.subTest(name):
                status, report, output = run_kit(name, "--only", area, "-k", select)
                self.assertEqual(status, 1, output[-2000:])
                self.assertFalse(report["passed"])
                self.assertTrue(report["failures"], output[-2000:])
                self.assertEqual({failure["area"] for failure in report["failures"]}, {area})

    def test_the_example_backend_passes_what_the_mutants_break(self):
        selects = " or ".join(f"({select})" for _group, _area, select in mutants().values())
        status, report, output = run_kit("pygloo", "-k", selects)
        self.assertEqual(status, 0, output[-3000:])
        self.assertTrue(report["passed"])
        self.assertEqual(report["failures"], [])
        claimed = sum(counts["claimed"] for counts in report["areas"].values())
        self.assertGreaterEqual(claimed, 10)


if __name__ == "__main__":
    run_tests()
