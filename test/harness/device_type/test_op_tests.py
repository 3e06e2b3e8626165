"""``ops`` (torch_testing_ext._engine.device_type.op_tests): one test per OpInfo and dtype under
``instantiate_device_type_tests``, with the op's decorators for that test, on records made
here (the ids on real ``op_db`` entries are compared with upstream's in
``testcase/test_upstream_ids.py``)."""

import unittest

import torch

from torch_testing_ext.common_device_type import OpDTypes, instantiate_device_type_tests, ops
from torch_testing_ext.common_utils import TestCase, TrackedInputIter, parametrize


class Op:
    """An OpInfo-like record: its dtypes per device type, and decorators for (class, test, dtype)."""

    def __init__(self, name, variant="", dtypes=(torch.float32, torch.int64), backward=(torch.float32,),
                 decorators=()):
        self.name = name
        self.formatted_name = (f"{name}_{variant}" if variant else name).replace(".", "_")
        self.dtypes = set(dtypes)
        self.dtypesIfCUDA = set(dtypes)
        self.backward = set(backward)
        self.decorators = list(decorators)
        self.asked = []

    def supported_dtypes(self, device_type):
        return self.dtypes

    def supported_backward_dtypes(self, device_type):
        return self.backward

    def get_decorators(self, test_class, test_name, device, dtype, param_kwargs):
        self.asked.append((test_class, test_name, device, dtype, sorted(param_kwargs)))
        return [decorator for (cls, test, dtypes, decorator) in self.decorators
                if cls == test_class and test == test_name and (dtypes is None or dtype in dtypes)]


def instantiate(generic):
    scope = {generic.__name__: generic}
    instantiate_device_type_tests(generic, scope, only_for="cpu")
    return scope[generic.__name__ + "CPU"]


def names_of(cls):
    return sorted(name for name in vars(cls) if name.startswith("test"))


def run(cls):
    return unittest.defaultTestLoader.loadTestsFromTestCase(cls).run(unittest.TestResult())


class TestOps(TestCase):
    def test_one_test_per_op_and_supported_dtype_with_its_arguments(self):
        seen = {}
        add, norm = Op("add"), Op("linalg.norm", "subgradients", dtypes=(torch.float64,))

        class TestX(TestCase):
            @ops([add, norm])
            def test_x(self, device, dtype, op):
                seen[self._testMethodName] = (device, dtype, op.name)

        generated = instantiate(TestX)
        self.assertEqual(names_of(generated), ["test_x_add_cpu_float32", "test_x_add_cpu_int64",
                                                 "test_x_linalg_norm_subgradients_cpu_float64"])
        result = run(generated)
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(seen, {"test_x_add_cpu_float32": ("cpu", torch.float32, "add"),
                                "test_x_add_cpu_int64": ("cpu", torch.int64, "add"),
                                "test_x_linalg_norm_subgradients_cpu_float64": ("cpu", torch.float64, "linalg.norm")})
        # Decorators are asked for with the generic class's and test's names and the test's arguments.
        self.assertIn(("TestX", "test_x", "cpu", torch.float32, ["device", "dtype", "op"]), add.asked)

    def test_dtype_choices(self):
        op = Op("add", dtypes=(torch.float32, torch.int64), backward=(torch.float32,))

        class TestX(TestCase):
            @ops([op], allowed_dtypes=(torch.int64, torch.float16))
            def test_allowed(self, device, dtype, op):
                pass

            @ops([op], dtypes=[torch.bool])
            def test_listed(self, device, dtype, op):
                pass

            @ops([op], dtypes=OpDTypes.none)
            def test_none(self, device, op):
                pass

            @ops([op], dtypes=OpDTypes.any_one)
            def test_one(self, device, dtype, op):
                pass

            @ops([op], dtypes=OpDTypes.supported_backward)
            def test_backward(self, device, dtype, op):
                pass

            @ops([op], dtypes=OpDTypes.unsupported_backward)
            def test_not_backward(self, device, dtype, op):
                pass

        names = names_of(instantiate(TestX))
        self.assertIn("test_allowed_add_cpu_int64", names)
        self.assertNotIn("test_allowed_add_cpu_float16", names)  # allowed, but not supported
        self.assertIn("test_listed_add_cpu_bool", names)
        self.assertIn("test_none_add_cpu", names)
        self.assertIn("test_one_add_cpu_float32", names)
        self.assertEqual([n for n in names if n.startswith("test_backward")], ["test_backward_add_cpu_float32"])
        self.assertIn("test_not_backward_add_cpu_int64", names)
        self.assertNotIn("test_not_backward_add_cpu_float32", names)
        self.assertEqual(len([n for n in names if n.startswith("test_not_backward")]), 11)

    def test_the_ops_decorators_for_the_test_apply_to_it_only(self):
        op = Op("add", decorators=[("TestX", "test_x", {torch.int64}, unittest.skip("Skipped!")),
                                   ("TestX", "test_x", {torch.float32}, unittest.expectedFailure),
                                   ("TestX", "test_other", None, unittest.skip("not this test")),
                                   ("TestY", "test_x", None, unittest.skip("not this class"))])

        class TestX(TestCase):
            @ops([op])
            def test_x(self, device, dtype, op):
                self.assertEqual(dtype, torch.int64)  # fails for float32: expected

            @ops([op], allowed_dtypes=(torch.int64,))
            def test_y(self, device, dtype, op):
                pass

        result = run(instantiate(TestX))
        self.assertEqual([(test._testMethodName, reason) for test, reason in result.skipped],
                         [("test_x_add_cpu_int64", "Skipped!")])
        self.assertEqual([test._testMethodName for test, _ in result.expectedFailures], ["test_x_add_cpu_float32"])
        self.assertEqual((result.testsRun, result.errors, result.failures), (3, [], []))

    def test_parametrize_above_and_below_names_its_part_there(self):
        class TestX(TestCase):
            @parametrize("n", [1])
            @ops([Op("add", dtypes=(torch.float32,))])
            @parametrize("flag", [True])
            def test_x(self, device, dtype, op, n, flag):
                pass

        self.assertEqual(names_of(instantiate(TestX)), ["test_x_n_1_add_flag_True_cpu_float32"])

    def test_refusals(self):
        with self.assertRaisesRegex(ValueError, "empty op list"):
            class TestEmpty(TestCase):
                @ops(op for op in [])
                def test_x(self, device, dtype, op):
                    pass

            instantiate(TestEmpty)

        from torch_testing_ext.common_device_type import dtypes

        with self.assertRaisesRegex(RuntimeError, "@dtypes and @ops both"):
            class TestBoth(TestCase):
                @ops([Op("add")])
                @dtypes(torch.float32)
                def test_x(self, device, dtype, op):
                    pass

            instantiate(TestBoth)

    def test_a_failure_names_the_sample_input_it_was_on(self):
        class TestX(TestCase):
            @ops([Op("add", dtypes=(torch.float32,))])
            def test_x(self, device, dtype, op):
                for sample in TrackedInputIter(iter(["first", "second"]), "sample input"):
                    if sample == "second":
                        raise ValueError("boom")

        result = run(instantiate(TestX))
        self.assertEqual(len(result.errors), 1)
        self.assertIn("ValueError: boom", result.errors[0][1])
        self.assertIn("Caused by sample input at index 1: 'second'", result.errors[0][1])
