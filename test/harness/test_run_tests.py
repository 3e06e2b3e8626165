"""Self-tests of run_tests(): the command-line flags of every test file."""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from torch_testing_ext.common_utils import TestCase, run_tests

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "simple_cases.py")


def run_fixture(*args, **env):
    completed = subprocess.run([sys.executable, FIXTURE, *args], capture_output=True, text=True,
                               env=dict(os.environ, **env), timeout=120)
    return completed.returncode, completed.stdout, completed.stderr


class TestRunTests(TestCase):
    def test_list_prints_ids_and_runs_nothing(self):
        code, out, err = run_fixture("--list")
        self.assertEqual(code, 0, err)
        self.assertEqual(out.split(), [
            "Alpha.test_one", "Alpha.test_prints_seed", "Alpha.test_skipped", "Alpha.test_two",
            "Beta.test_param_n_1", "Beta.test_param_n_2", "Failing.test_fails",
        ])
        self.assertNotIn("Ran", err)

    def test_k_selects_by_substring(self):
        code, out, _ = run_fixture("--list", "-k", "param")
        self.assertEqual(out.split(), ["Beta.test_param_n_1", "Beta.test_param_n_2"])
        code, out, _ = run_fixture("--list", "-k", "one", "-k", "two")
        self.assertEqual(out.split(), ["Alpha.test_one", "Alpha.test_two"])

    def test_test_ids_select(self):
        code, out, _ = run_fixture("--list", "Beta", "Alpha.test_one")
        self.assertEqual(out.split(), ["Beta.test_param_n_1", "Beta.test_param_n_2", "Alpha.test_one"])
        code, _, err = run_fixture("Alpha.test_one", "-v")
        self.assertEqual(code, 0)
        self.assertIn("Ran 1 test", err)

    def test_exit_status_reflects_failure(self):
        self.assertEqual(run_fixture()[0], 0)
        code, _, err = run_fixture(SIMPLE_CASES_FAIL="1")
        self.assertEqual(code, 1)
        self.assertIn("forced failure", err)

    def test_save_xml_writes_junit(self):
        with tempfile.TemporaryDirectory() as reports:
            code, _, err = run_fixture("--save-xml", reports, SIMPLE_CASES_FAIL="1")
            self.assertEqual(code, 1, err)
            self.assertEqual(os.listdir(reports), ["TEST-simple_cases.xml"])
            root = ET.parse(os.path.join(reports, "TEST-simple_cases.xml")).getroot()
        self.assertEqual(root.tag, "testsuites")
        suite = root.find("testsuite")
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")),
                         ("7", "1", "0", "1"))
        cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
        self.assertEqual(len(cases), 7)
        self.assertIsNotNone(cases[("Failing", "test_fails")].find("failure"))
        self.assertIn("forced failure", cases[("Failing", "test_fails")].find("failure").text)
        self.assertEqual(cases[("Alpha", "test_skipped")].find("skipped").get("message"), "skipped on purpose")
        self.assertIsNone(cases[("Alpha", "test_one")].find("failure"))
        self.assertGreaterEqual(float(cases[("Alpha", "test_one")].get("time")), 0.0)

    def test_bad_arguments_exit_2_with_one_line(self):
        for args in (["--no-such-flag"], ["--repeat", "0"], ["--seed", "x"], ["NoSuchClass"],
                     ["Alpha.test_missing"]):
            with self.subTest(args=args):
                code, out, err = run_fixture(*args)
                self.assertEqual(code, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn("error:", err)
                self.assertNotIn("Traceback", err)

    def test_repeat_runs_again(self):
        code, _, err = run_fixture("Alpha.test_one", "--repeat", "3")
        self.assertEqual(code, 0)
        self.assertEqual(err.count("Ran 1 test"), 3)

    def test_seed_changes_setup_seed(self):
        _, default_out, _ = run_fixture("Alpha.test_prints_seed")
        _, again_out, _ = run_fixture("Alpha.test_prints_seed")
        _, seeded_out, _ = run_fixture("Alpha.test_prints_seed", "--seed", "7")
        self.assertEqual(default_out, again_out)
        self.assertNotEqual(default_out, seeded_out)
        self.assertIn("first random:", seeded_out)

    def test_use_pytest(self):
        code, out, _ = run_fixture("--use-pytest", "-k", "param")
        self.assertEqual(code, 0, out)
        self.assertIn("2 passed", out)

    def test_accept_flag_is_accepted(self):
        code, _, err = run_fixture("Alpha.test_one", "--accept")
        self.assertEqual(code, 0, err)


if __name__ == "__main__":
    run_tests()
