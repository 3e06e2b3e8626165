"""Test ids are upstream's: the same class definitions (``fixtures/id_cases.py``: parametrize
over many kinds of values, subtest names, name_fn, stacked parametrize and decorateIf,
instantiate_parametrized_tests, instantiate_device_type_tests with dtypes and parametrize, ``ops``
over real ``op_db`` entries with every ``OpDTypes`` choice, ``allowed_dtypes``, ``@parametrize``
above and below it, and ``DecorateInfo`` skips and expected failures; and the random sample
inputs such tests see, which both harnesses seed from the generic test's name)
generate the same test ids on our harness as on the installed torch's
``torch.testing._internal``, which runs in a process of its own (importing it changes torch's
global state)."""

import json
import subprocess
import sys
import unittest

import torch

from torch_testing_ext._engine.testcase.parametrize import REFUSES_DOTTED_NAMES
from torch_testing_ext.common_device_type import dtypes, instantiate_device_type_tests
from torch_testing_ext.common_utils import TestCase, instantiate_parametrized_tests, parametrize, subtest

from fixtures import id_cases
from fixtures.paths import FIXTURES, HARNESS


def upstream_ids():
    completed = subprocess.run([sys.executable, str(FIXTURES / "id_cases.py"), "upstream"],
                               capture_output=True, text=True, cwd=HARNESS, timeout=300)
    if completed.returncode != 0:
        raise RuntimeError(f"torch's harness did not run the cases:\n{completed.stderr}")
    return json.loads(completed.stdout)


class TestIdsMatchUpstream(TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.upstream = upstream_ids()
        cls.ours = id_cases.case_ids(id_cases.harness("ours"))

    def test_every_case_ran_on_torchs_harness(self):
        self.assertEqual(sorted(self.upstream), sorted(id_cases.CASES))
        errors = {name: ids for name, ids in self.upstream.items() if isinstance(ids, str) and ids != "raises"}
        self.assertEqual(errors, {})
        self.assertGreaterEqual(len(id_cases.CASES), 25)
        # A sample of the rules, so that the comparison cannot pass by both sides being empty.
        self.assertIn("TestX.test_x_op0_reduce_op_max", self.upstream["issue_example"])
        self.assertIn("TestX.test_x_float32", self.upstream["dtypes_as_values"])
        self.assertIn("TestFooCPU.test_reduce_op0_reduce_op_max_cpu_float32", self.upstream["device_parametrize"])
        self.assertIn("TestOpsCPU.test_x_nn_functional_conv2d_cpu_float32", self.upstream["ops_supported_dtypes"])
        self.assertIn("TestOpsCPU.test_x_add_cpu_int64:skip", self.upstream["ops_decorate_info"])
        self.assertIn("TestOpsCPU.test_x_n_1_add_flag_True_cpu_float32", self.upstream["ops_with_parametrize"])
        self.assertEqual(len(self.upstream["ops_sample_inputs"]), 3)

    def test_names_with_a_dot_are_refused_exactly_where_torch_refuses_them(self):
        # torch 2.14.1's and 2.15.0's harness refuse them, 2.13.0's keeps them. Ours follows the installed one.
        dotted = ("subtest_name_with_a_dot", "name_fn_returning_dots", "device_name_fn_returning_dots")
        upstream_refuses = [self.upstream[name] == "raises" for name in dotted]
        self.assertIn(upstream_refuses, ([True] * 3, [False] * 3))
        self.assertEqual([self.ours[name] == "raises" for name in dotted], upstream_refuses)
        self.assertEqual(upstream_refuses[0], REFUSES_DOTTED_NAMES)

    def test_ids_are_upstreams(self):
        differ = [name for name in id_cases.CASES if self.ours[name] != self.upstream[name]]
        for name in id_cases.CASES:
            with self.subTest(case=name):
                self.assertEqual(self.ours[name], self.upstream[name])
        self.assertEqual(differ, [], f"{len(differ)} of {len(id_cases.CASES)} cases differ")


class TestCasesNamedByPositionRun(TestCase):
    """The tests behind upstream's ids get their own values."""

    def test_values_named_by_position_reach_their_test(self):
        seen = {}

        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("op,reduce_op", [(torch.maximum, "max"), (torch.minimum, "min"), (None, "none")])
            def test_x(self, op, reduce_op):
                seen[self._testMethodName] = (op, reduce_op)

        result = unittest.defaultTestLoader.loadTestsFromTestCase(Cases).run(unittest.TestResult())
        self.assertEqual((result.testsRun, result.wasSuccessful()), (3, True))
        self.assertEqual(seen, {"test_x_op0_reduce_op_max": (torch.maximum, "max"),
                                "test_x_op1_reduce_op_min": (torch.minimum, "min"),
                                "test_x_op2_reduce_op_none": (None, "none")})

    def test_parametrized_dtype_is_named_after_the_device_and_passed(self):
        seen = {}

        class TestFoo(TestCase):
            @parametrize("dtype", [torch.float16, subtest(torch.int8, name="small")])
            def test_p(self, device, dtype):
                seen[self._testMethodName] = (device, dtype)

        scope = {"TestFoo": TestFoo}
        instantiate_device_type_tests(TestFoo, scope, only_for="cpu")
        result = unittest.defaultTestLoader.loadTestsFromTestCase(scope["TestFooCPU"]).run(unittest.TestResult())
        self.assertTrue(result.wasSuccessful())
        self.assertEqual(seen, {"test_p_float16_cpu_float16": ("cpu", torch.float16),
                                "test_p_small_cpu_int8": ("cpu", torch.int8)})

    def test_a_parameter_given_twice_is_refused(self):
        def twice():
            @instantiate_parametrized_tests
            class Cases(TestCase):
                @parametrize("x", [1])
                @parametrize("x", [2])
                def test_x(self, x):
                    pass

        with self.assertRaisesRegex(RuntimeError, r"\['x'\] are parametrized by more than one"):
            twice()

        class TestFoo(TestCase):
            @parametrize("dtype", [torch.float32])
            @dtypes(torch.float64)
            def test_both(self, device, dtype):
                pass

        with self.assertRaisesRegex(RuntimeError, r"\['dtype'\] given by both @dtypes and @parametrize"):
            instantiate_device_type_tests(TestFoo, {"TestFoo": TestFoo}, only_for="cpu")
