"""Self-tests of ``benchmarks/many_worlds_cost.py`` that time nothing: the two files it sets
side by side run one body, on the same ranks, across worlds and as separate worlds; bad
arguments are refused before anything runs."""

import ast
import importlib.util
import subprocess
import sys

from torch_testing_ext.common_utils import TestCase

from fixtures.paths import REPO

SCRIPT = REPO / "benchmarks" / "many_worlds_cost.py"
spec = importlib.util.spec_from_file_location("many_worlds_cost", SCRIPT)
cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cost)


class TestManyWorldsCost(TestCase):
    def test_both_files_run_one_body_on_the_same_ranks(self):
        for kind in cost.KINDS:
            across = cost.worlds_file(kind, tests=3, steps=7)
            separate = cost.separate_file(kind, tests=3, steps=7)
            for text in (across, separate):
                ast.parse(text)
                self.assertIn(cost.BODY, text)
                self.assertIn(f'ranks="{kind}"', text)
                self.assertIn("range(3)", text)
                self.assertIn(", 7)", text)
            self.assertIn("@pytest.mark.worlds(1, 2, 4", across)
            self.assertIn("fit(rank, world_size, compare, 7)", across)
            self.assertIn("@pytest.mark.world_size([1, 2, 4]", separate)
            self.assertNotIn("compare", separate)

    def test_bad_arguments_are_refused(self):
        result = subprocess.run([sys.executable, str(SCRIPT), "--tests", "0"], capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--tests, --steps and --repeats take positive integers", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
