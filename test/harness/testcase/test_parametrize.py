"""Self-tests of parametrize / instantiate_parametrized_tests."""

import unittest
from unittest import mock

import torch

from torch_testing_ext._engine.testcase import parametrize as parametrize_module
from torch_testing_ext.common_utils import (
    TestCase,
    decorateIf,
    instantiate_parametrized_tests,
    parametrize,
    subtest,
    validate_test_name,
)


def run_all(cls):
    return unittest.defaultTestLoader.loadTestsFromTestCase(cls).run(unittest.TestResult())


def outcomes(result):
    """test name -> how it ended, for every test that did not simply pass."""
    ended = {}
    for kind in ("failures", "errors", "skipped", "expectedFailures", "unexpectedSuccesses"):
        for test, _ in getattr(result, kind):
            ended[test.id().rsplit(".", 1)[-1]] = kind
    return ended


class TestParametrize(TestCase):
    def test_one_method_per_combination(self):
        seen = []

        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("x", [1, 2])
            @parametrize("dtype", [torch.float32, torch.int64])
            def test_combo(self, x, dtype):
                seen.append((x, dtype))

        names = sorted(n for n in dir(Cases) if n.startswith("test"))
        # Upstream's names: a dtype without its parameter's name, the top decorator's part first.
        self.assertEqual(names, ["test_combo_x_1_float32", "test_combo_x_1_int64",
                                 "test_combo_x_2_float32", "test_combo_x_2_int64"])
        self.assertFalse(hasattr(Cases, "test_combo"))
        result = unittest.defaultTestLoader.loadTestsFromTestCase(Cases).run(
            unittest.TestResult())
        self.assertTrue(result.wasSuccessful())
        self.assertEqual(sorted(seen, key=str), sorted(
            [(1, torch.float32), (1, torch.int64), (2, torch.float32), (2, torch.int64)], key=str))

    def test_each_method_keeps_its_own_body(self):
        seen = []

        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("n", [1])
            def test_first(self, n):
                seen.append(("first", n))

            @parametrize("n", [2])
            def test_second(self, n):
                seen.append(("second", n))

        Cases("test_first_n_1").test_first_n_1()
        Cases("test_second_n_2").test_second_n_2()
        self.assertEqual(seen, [("first", 1), ("second", 2)])

    def test_tuples_and_name_fn(self):
        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("a,b", [(1, 2), (3, 4)], name_fn=lambda a, b: f"sum{a + b}")
            def test_pair(self, a, b):
                self.assertEqual(b - a, 1)

        self.assertEqual(sorted(n for n in dir(Cases) if n.startswith("test")), ["test_pair_sum3", "test_pair_sum7"])
        self.assertEqual(Cases.test_pair_sum3.__qualname__.split(".")[-1], "test_pair_sum3")

    def test_failure_of_one_case_is_reported(self):
        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("n", [0, 1])
            def test_positive(self, n):
                self.assertGreater(n, 0)

        result = unittest.defaultTestLoader.loadTestsFromTestCase(Cases).run(
            unittest.TestResult())
        self.assertEqual([t.id().split(".")[-1] for t, _ in result.failures], ["test_positive_n_0"])

    def test_bad_values(self):
        with self.assertRaises(ValueError):
            parametrize("a,b", [(1,)])(lambda self, a, b: None)
        with self.assertRaises(ValueError):
            parametrize("", [1])



class TestSubtest(TestCase):
    def test_subtest_names_and_decorates_its_case_only(self):
        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("x", [subtest(0, name="zero", decorators=[unittest.expectedFailure]),
                               subtest(3, decorators=[unittest.skip("three is skipped")]), 5])
            def test_positive(self, x):
                self.assertGreater(x, 0)

        self.assertEqual(sorted(n for n in dir(Cases) if n.startswith("test")),
                         ["test_positive_x_3", "test_positive_x_5", "test_positive_zero"])
        result = run_all(Cases)
        self.assertEqual(outcomes(result), {"test_positive_zero": "expectedFailures",
                                            "test_positive_x_3": "skipped"})
        self.assertEqual(result.testsRun, 3)
        self.assertFalse(hasattr(Cases.test_positive_x_5, "__unittest_expecting_failure__"))

    def test_subtest_with_several_arguments_and_name_fn(self):
        seen = []

        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("a,b", [subtest((1, 2), name="small"), (3, 4)], name_fn=lambda a, b: f"p{a}{b}")
            def test_pair(self, a, b):
                seen.append((a, b))

        self.assertEqual(sorted(n for n in dir(Cases) if n.startswith("test")),
                         ["test_pair_p34", "test_pair_small"])
        self.assertTrue(run_all(Cases).wasSuccessful())
        self.assertEqual(sorted(seen), [(1, 2), (3, 4)])

    def test_a_subtest_skip_is_decided_before_ranks_start(self):
        from unittest import mock

        from torch_testing_ext._engine.fresh import supervisor
        from torch_testing_ext.common_distributed import MultiProcessTestCase, requires_world_size

        @instantiate_parametrized_tests
        class Cases(MultiProcessTestCase):
            world_size = 2

            @parametrize("n", [subtest(1, name="big", decorators=[requires_world_size(64)])])
            def test_n(self, n):
                raise AssertionError("must not run")

        with mock.patch.object(supervisor, "run_ranks", side_effect=AssertionError("a rank started")):
            result = run_all(Cases)
        self.assertEqual([reason for _, reason in result.skipped], ["Test requires world size of 64"])


class TestDecorateIf(TestCase):
    def test_decorates_the_cases_whose_parameters_match(self):
        @instantiate_parametrized_tests
        class Cases(TestCase):
            @decorateIf(unittest.skip("x is 2"), lambda params: params["x"] == 2)
            @parametrize("x", [1, 2])
            @parametrize("y", ["a", "b"])
            @decorateIf(unittest.expectedFailure, lambda params: params == {"x": 1, "y": "b"})
            def test_xy(self, x, y):
                self.assertNotEqual((x, y), (1, "b"))

        result = run_all(Cases)
        self.assertEqual(outcomes(result), {"test_xy_x_2_y_a": "skipped", "test_xy_x_2_y_b": "skipped",
                                            "test_xy_x_1_y_b": "expectedFailures"})
        self.assertEqual(result.testsRun, 4)

    def test_without_parametrize_appends_an_underscore_as_upstream(self):
        @instantiate_parametrized_tests
        class Cases(TestCase):
            @decorateIf(unittest.skip("always"), lambda params: params == {})
            def test_plain(self):
                raise AssertionError("must not run")

        self.assertEqual([n for n in dir(Cases) if n.startswith("test")], ["test_plain_"])
        self.assertEqual(outcomes(run_all(Cases)), {"test_plain_": "skipped"})


class TestDottedNames(TestCase):
    """A generated name with "." is refused where the installed torch refuses it (torch 2.14.1 and 2.15.0;
    ``test_torch_private`` checks the probe against torch's own harness)."""

    def define(self):
        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("x", [1, 2.5], name_fn=lambda x: f"x{x}")
            def test_x(self, x):
                pass

        return Cases

    def test_refused_naming_the_test_where_torch_refuses(self):
        with mock.patch.object(parametrize_module, "REFUSES_DOTTED_NAMES", True):
            with self.assertRaisesRegex(RuntimeError, r'"test_x_x2\.5" contains "\."'):
                self.define()

    def test_kept_where_torch_keeps_it(self):
        with mock.patch.object(parametrize_module, "REFUSES_DOTTED_NAMES", False):
            cases = self.define()
        self.assertTrue(hasattr(cases, "test_x_x2.5"))
        self.assertTrue(hasattr(cases, "test_x_x1"))

    def test_validate_test_name(self):
        validate_test_name("test_x_2_5_cpu_float32")
        with self.assertRaisesRegex(RuntimeError, r'"test_x_torch\.float32" contains "\."'):
            validate_test_name("test_x_torch.float32")
