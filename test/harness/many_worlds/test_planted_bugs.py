"""Five bugs of data-parallel training, each planted in a toy loop and each caught by a test
across worlds 1, 2 and 4, whose report names the value and step where it first shows.

``fixtures/planted_bugs.py`` is the loop (6 rows of a global batch split among the ranks, each
step comparing the weight it starts from, then its loss) and one pytest test per bug, plus the
loop without a bug; ``fixtures/planted_bugs_unittest.py`` runs it under ``across_worlds`` without
a bug and with two of them. ONE ``python -m pytest`` run of the first and ONE ``python FILE``
run of the second; each test's outcome and report are read from their JUnit XML.

Where each bug first shows, from how it acts (world 1 is the reference, and in a world of one
rank each bug is the correct loop):

- the ranks' mean gradients summed, not averaged: the initial weight and the first loss are
  untouched, the first update is twice as large in world 2: ``'weight' step 1``, world 2;
- a seed that depends on the rank: the ranks of world 2 start from different weights:
  ``'weight' step 0``, rank 1 of world 2 against its rank 0;
- the shares all-reduced twice: the first loss (and gradient) doubled in world 2:
  ``'loss' step 0``, world 2;
- a split that drops the remainder (6 // 4 rows a rank): nothing dropped in world 2, which
  agrees at every step, two rows dropped in world 4: ``'loss' step 0``, world 4;
- the learning rate times the world size: as the first bug, ``'weight' step 1``, world 2.
"""

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

from torch_testing_ext.common_utils import TestCase

from fixtures.paths import FIXTURES
from fixtures.pytest_runs import PytestRun
from fixtures.runs import checkout_env

LOOP = (FIXTURES / "planted_bugs.py").read_text()


def line_of(text):
    """``planted_bugs.py:N``, N the line of the loop that holds ``text``."""
    (number,) = [n for n, line in enumerate(LOOP.splitlines(), 1) if text in line]
    return f"planted_bugs.py:{number}"


WEIGHT_LINE = line_of('compare("weight", w)')
LOSS_LINE = line_of('compare("loss", shares[0])')

# bug: (the report's summary of its first divergence, the line of that value's compare call)
FIRST_DIVERGENCE = {
    "sum_not_mean": ("'weight' step 1: world 2 differs from world 1 (the reference)", WEIGHT_LINE),
    "rank_seed": ("'weight' step 0: in world 2, rank 1 recorded another value than rank 0", WEIGHT_LINE),
    "doubled_all_reduce": ("'loss' step 0: world 2 differs from world 1 (the reference)", LOSS_LINE),
    "dropped_shard": ("'loss' step 0: world 4 differs from world 1 (the reference)", LOSS_LINE),
    "scaled_lr": ("'weight' step 1: world 2 differs from world 1 (the reference)", WEIGHT_LINE),
}
IN_UNITTEST = ("rank_seed", "dropped_shard")


def junit_reports(paths):
    """{test name: (outcome, text)} of JUnit reports: ``passed`` or the tag of what the test case
    holds instead (``failure``, ``error``, ``skipped``), and that element's text."""
    found = {}
    for path in paths:
        for case in ElementTree.parse(path).iter("testcase"):
            problems = [child for child in case if child.tag in ("failure", "error", "skipped")]
            found[case.get("name")] = (problems[0].tag, problems[0].text or "") if problems else ("passed", "")
    return found


def step_rows(report, name):
    """{step: {world: cell}} of the report's table of ``name``'s differences per step."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name!r}, largest absolute difference"))
    worlds = [int(size) for size in re.findall(r"world (\d+)", lines[start + 1])]
    rows = {}
    for line in lines[start + 2:]:
        cells = line.split()
        if not cells or not cells[0].isdigit():
            break
        rows[int(cells[0])] = dict(zip(worlds, cells[1:], strict=True))
    return rows


class TestPlantedBugs(TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.files = PytestRun({"planted_bugs.py": LOOP})
        root = cls.files.root
        shutil.copy(FIXTURES / "planted_bugs_unittest.py", root)
        cls.pytest = cls.files.run("planted_bugs.py", "-q", f"--junitxml={root / 'pytest.xml'}")
        cls.unittest = subprocess.run([sys.executable, "planted_bugs_unittest.py", "--save-xml", "unittest-xml"],
                                      cwd=root, env=checkout_env(), capture_output=True, text=True, timeout=300)
        cls.pytest_reports = junit_reports([root / "pytest.xml"])
        cls.unittest_reports = junit_reports(sorted((root / "unittest-xml").rglob("*.xml")))

    @classmethod
    def tearDownClass(cls):
        cls.files.cleanup()
        super().tearDownClass()

    def assert_caught(self, reports, bug, exception):
        summary, line = FIRST_DIVERGENCE[bug]
        outcome, report = reports[f"test_{bug}"]
        self.assertEqual(outcome, "failure", report)
        self.assertRegex(report, rf"^{re.escape(exception)}: the worlds disagree: {re.escape(summary)}\n")
        where = summary.split(":")[0]  # 'weight' step 1
        self.assertIn(f"first divergence, in execution order: {where}, compared at {line} ", report)
        return report

    def test_the_pytest_run_fails_the_five_bugs_alone(self):
        self.assertEqual(self.pytest.returncode, 1, self.pytest.stdout[-3000:])
        outcomes = {name: outcome for name, (outcome, _) in self.pytest_reports.items()}
        self.assertEqual(outcomes, {"test_correct": "passed", **{f"test_{bug}": "failure" for bug in FIRST_DIVERGENCE}})
        self.assertIn("5 failed, 1 passed", self.pytest.stdout)

    def test_each_bug_is_named_where_it_first_shows(self):
        for bug in FIRST_DIVERGENCE:
            with self.subTest(bug):
                self.assert_caught(self.pytest_reports, bug, "WorldsDisagree")

    def test_the_dropped_shard_parts_world_4_alone(self):
        _, report = self.pytest_reports["test_dropped_shard"]
        rows = step_rows(report, "loss")
        self.assertEqual(sorted(rows), [0, 1, 2])
        for step, cells in rows.items():
            with self.subTest(step=step):
                self.assertFalse(cells[2].endswith("*"), f"world 2 agrees: {cells}")
                self.assertTrue(cells[4].endswith("*"), f"world 4 parts: {cells}")

    def test_under_across_worlds_too(self):
        self.assertEqual(self.unittest.returncode, 1, self.unittest.stderr[-3000:])
        self.assertEqual(set(self.unittest_reports), {"test_correct", *(f"test_{bug}" for bug in IN_UNITTEST)})
        self.assertEqual(self.unittest_reports["test_correct"], ("passed", ""))
        for bug in IN_UNITTEST:
            with self.subTest(bug):
                report = self.assert_caught(self.unittest_reports, bug, "torch_testing_ext.WorldsDisagree")
                self.assertIn(report.strip().splitlines()[1], self.unittest.stderr)  # as the user sees it
