"""The conformance kit's engine: claims, settings, the scorecard, one pytest run and the command line.

In process: a manifest checked (every problem one line), why an item is or is not claimed, the
settings handed to the ranks and read back, the scorecard's counts and renderings. Then ONE
``pytest --c10d-backend gloo --pyargs torch_testing_ext.conformance`` run over the self-test's
own items (``fixtures/conformance_selftest_items.py``: one passes, one fails on rank 1, four hang
with a 2 s item timeout, one is not claimed): the failure names the rank, the call and the first
wrong element; three hung items time out, named, and the fourth fails without running; the JSON
report says so and the run fails. And the command line: bad input is one line and exit status 2,
nothing run; ``--list`` runs nothing.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from torch_testing_ext._engine.conformance.claims import CORE, ClaimsError, claims_from, load_claims, shipped_names
from torch_testing_ext._engine.conformance.kit_settings import (
    ENVIRONMENT,
    checked_settings,
    from_environment,
    parse_world_sizes,
    to_environment,
)
from torch_testing_ext._engine.conformance.scorecard import FAILED, NOT_CLAIMED, PASSED, ItemResult, Scorecard
from torch_testing_ext._engine.worlds.settings import SettingError
from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures.paths import REPO
from fixtures.runs import checkout_env

FIXTURES = REPO / "test" / "harness" / "fixtures"


class TestClaims(TestCase):
    def test_an_item_is_claimed_when_its_area_dtype_and_op_are_and_no_pattern_says_otherwise(self):
        claims = claims_from({"areas": ["collectives"], "dtypes": ["float32"], "reduce_ops": ["SUM"],
                              "not_claimed": {"collectives.all_to_all*": "not yet"}}, "test")
        self.assertIsNone(claims.reason_not_claimed("collectives.all_reduce[SUM-float32]", "collectives", "float32",
                                                    "SUM"))
        self.assertEqual(claims.reason_not_claimed("p2p.send_recv", "p2p", None, None), "not claimed: the area p2p")
        self.assertEqual(claims.reason_not_claimed("collectives.all_reduce[SUM-int8]", "collectives", "int8", "SUM"),
                         "not claimed: the dtype int8")
        self.assertEqual(claims.reason_not_claimed("collectives.all_reduce[MAX-float32]", "collectives", "float32",
                                                   "MAX"), "not claimed: the reduce op MAX")
        self.assertEqual(claims.reason_not_claimed("collectives.all_to_all_single", "collectives", None, None),
                         "not claimed: not yet")

    def test_a_manifest_the_kit_cannot_use_is_one_line(self):
        bad = [([], "a manifest is a JSON object"),
               ({"areas": ["collectives"], "colour": 1}, "unknown key 'colour'"),
               ({"dtypes": ["float32"]}, "no 'areas'"),
               ({"areas": ["telepathy"]}, "'areas' names 'telepathy', not in the contract"),
               ({"areas": "collectives"}, "'areas' must be a list of strings"),
               ({"areas": ["p2p"], "reduce_ops": ["MEDIAN"]}, "'reduce_ops' names 'MEDIAN'"),
               ({"areas": ["p2p"], "not_claimed": ["x"]}, "'not_claimed' maps item-id patterns to reasons")]
        for manifest, message in bad:
            with self.subTest(manifest=manifest), self.assertRaises(ClaimsError) as caught:
                claims_from(manifest, "mine.json")
            self.assertIn(message, str(caught.exception))
            self.assertTrue(str(caught.exception).startswith("mine.json: "))
            self.assertNotIn("\n", str(caught.exception))

    def test_where_claims_come_from(self):
        self.assertEqual(load_claims("mybackend").source, "the core contract (no manifest: what gloo does on CPU)")
        self.assertEqual(load_claims("mybackend").areas, frozenset(CORE["areas"]))
        own = load_claims("mybackend", module_claims={"areas": ["p2p"]})
        self.assertEqual((own.areas, own.backend), (frozenset({"p2p"}), "mybackend"))
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "claims.json"
            path.write_text(json.dumps({"areas": ["objects"]}))
            self.assertEqual(load_claims("mybackend", str(path), {"areas": ["p2p"]}).areas, frozenset({"objects"}))
            path.write_text("{not json")
            with self.assertRaisesRegex(ClaimsError, r"claims.json: not JSON: .* at line 1"):
                load_claims("mybackend", str(path))
        with self.assertRaisesRegex(ClaimsError, "neither a shipped manifest"):
            load_claims("mybackend", "no-such-manifest")
        for name in shipped_names():
            with self.subTest(shipped=name):
                borrowed = load_claims("mybackend", name)
                self.assertIn("(borrowed)", borrowed.source)
                self.assertTrue(borrowed.areas)


class TestSettings(TestCase):
    def test_bad_settings_are_one_line(self):
        bad = [({"backend": ""}, "--c10d-backend: name the backend"),
               ({"backend": "gloo", "only": ("telepathy",)}, "--c10d-only telepathy: no such area"),
               ({"backend": "gloo", "item_timeout": "soon"}, "--c10d-item-timeout='soon'"),
               ({"backend": "gloo", "report": "out.txt"}, "a report is FILE.md (Markdown) or FILE.json"),
               ({"backend": "gloo", "world_sizes": "1"}, "expected world sizes of at least 2"),
               ({"backend": "gloo", "world_sizes": "2,2"}, "a world size is given twice")]
        for arguments, message in bad:
            with self.subTest(arguments), self.assertRaises(SettingError) as caught:
                checked_settings(**arguments)
            self.assertIn(message, str(caught.exception))

    def test_the_ranks_read_back_what_the_test_process_checked(self):
        settings = checked_settings("gloo", "my.module", "gloo", "cpu", "2,3", ("p2p", "objects"), "7.5")
        self.assertEqual(parse_world_sizes("2, 4"), (2, 4))
        environ = to_environment(settings)
        self.assertEqual(set(environ), set(ENVIRONMENT.values()))
        self.assertEqual(from_environment(environ), settings)
        self.assertIsNone(from_environment({}))


class TestScorecard(TestCase):
    def card(self, *results):
        return Scorecard("mine", "the core contract", (2,), "2.13.0", list(results), 3.2)

    def test_counts_and_verdict(self):
        card = self.card(ItemResult("p2p.send_recv", 2, PASSED),
                         ItemResult("p2p.isend_irecv", 2, FAILED, "rank 1 failed: ContractFailure: isend(...) ..."),
                         ItemResult("collectives.all_reduce[SUM-float16]", 2, NOT_CLAIMED, "not claimed: the dtype"))
        self.assertFalse(card.passed)
        self.assertEqual(card.areas(), {"collectives": {"claimed": 0, "passed": 0, "failed": 0, "not claimed": 1},
                                        "p2p": {"claimed": 2, "passed": 1, "failed": 1, "not claimed": 0}})
        markdown = card.as_markdown()
        self.assertIn("**FAILED: 1 claimed item run(s) failed**", markdown)
        self.assertIn("| p2p | 2 | 1 | 1 | 0 |", markdown)
        self.assertIn("- `p2p.isend_irecv` (world size 2): rank 1 failed: ContractFailure: isend(...) ...", markdown)
        self.assertIn("- not claimed: the dtype: 1 item run(s)", markdown)
        report = json.loads(card.as_json())
        self.assertEqual((report["passed"], report["failures"][0]["item"], report["kit_version"]),
                         (False, "p2p.isend_irecv", "1.0.0"))

    def test_a_run_that_claimed_nothing_did_not_pass(self):
        self.assertFalse(self.card(ItemResult("p2p.send_recv", 2, NOT_CLAIMED, "not claimed")).passed)
        self.assertTrue(self.card(ItemResult("p2p.send_recv", 2, PASSED)).passed)


def _kit_env():
    return checkout_env(PYTHONPATH=os.pathsep.join([str(REPO), str(FIXTURES)]))


class TestOneRun(TestCase):
    """ONE pytest run of the kit over the self-test's items."""

    @classmethod
    def setUpClass(cls):
        cls._temp = tempfile.TemporaryDirectory(prefix="kit-selftest-")
        report = Path(cls._temp.name) / "report.json"
        cls.result = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--c10d-backend", "gloo",
             "--c10d-import", "conformance_selftest_items", "--c10d-item-timeout", "2", "-k", "selftest",
             "--c10d-report", str(report), "--pyargs", "torch_testing_ext.conformance"],
            cwd=cls._temp.name, env=_kit_env(), capture_output=True, text=True, timeout=300)
        cls.output = cls.result.stdout + cls.result.stderr
        cls.report = json.loads(report.read_text()) if report.exists() else {}

    @classmethod
    def tearDownClass(cls):
        cls._temp.cleanup()

    def failure(self, name):
        return next(f["message"] for f in self.report["failures"] if name in f["item"])

    def test_the_run_fails_and_says_why(self):
        self.assertEqual(self.result.returncode, 1, self.output[-3000:])
        self.assertFalse(self.report["passed"])
        self.assertEqual(self.report["areas"]["collectives"],
                         {"claimed": 6, "passed": 1, "failed": 5, "not claimed": 1}, self.output[-3000:])
        self.assertIn("c10d conformance", self.output)  # the scorecard ends pytest's output

    def test_a_broken_promise_names_the_rank_the_call_and_the_first_wrong_element(self):
        self.assertEqual(self.failure("selftest_b_fails"),
                         "rank 1 failed: ContractFailure: all_reduce(dtype=float32, shape=(3,)) on rank 1 of 2: "
                         "element (1,) is 2.0, expected 1.0 (1 of 3 elements wrong)")

    def test_hung_items_time_out_alone_and_the_breaker_stops_their_area(self):
        for index in (1, 2, 3):
            self.assertIn("timed out after 2 s", self.failure(f"selftest_c_hangs_{index}"))
        self.assertIn("not run: 3 items of the area collectives timed out at world size 2",
                      self.failure("selftest_c_hangs_4"))

    def test_what_is_not_claimed_is_listed(self):
        self.assertEqual([(n["item"], n["reason"]) for n in self.report["not_claimed"]],
                         [("collectives.selftest_d_complex[complex64]", "not claimed: the dtype complex64")])


class TestCommandLine(TestCase):
    def run_kit(self, *args):
        return subprocess.run([sys.executable, "-m", "torch_testing_ext.conformance", *args], env=_kit_env(),
                              capture_output=True, text=True, timeout=300)

    def test_bad_input_is_one_line_and_status_2(self):
        bad = [(["--backend", "nosuch"], "--backend nosuch: no backend of that name is registered; --import MODULE"),
               (["--backend", "gloo", "--import", "no_such_module"], "--import no_such_module: cannot import it"),
               (["--backend", "gloo", "--world-sizes", "1"], "--world-sizes='1': expected world sizes"),
               (["--backend", "gloo", "--claims", "nowhere"], "--claims nowhere: neither a shipped manifest"),
               (["--backend", "gloo", "--report", "out.txt"], "--report='out.txt': a report is FILE.md")]
        for args, message in bad:
            with self.subTest(args):
                result = self.run_kit(*args)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(result.stderr.strip().splitlines(),
                                 [line for line in result.stderr.strip().splitlines() if message in line])
                self.assertEqual(result.stdout, "")

    def test_list_runs_nothing(self):
        result = self.run_kit("--backend", "gloo", "--import", "conformance_selftest_items", "--list")
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assertIn("2 ranks  collectives.selftest_a_passes[float32]  claimed", result.stdout)
        self.assertIn("2 ranks  collectives.selftest_d_complex[complex64]  not claimed: the dtype complex64",
                      result.stdout)
        self.assertNotIn("passed", result.stdout)


if __name__ == "__main__":
    run_tests()
