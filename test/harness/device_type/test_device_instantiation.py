"""Self-tests of ``common_device_type``: instantiate_device_type_tests (device types, only_for,
except_for, names, device and dtype arguments, parametrize), dtypes, onlyCPU, onlyCUDA,
onlyAccelerator and deviceCountAtLeast."""

import types
import unittest
from unittest import mock

import torch

from torch_testing_ext import devices
from torch_testing_ext._engine.device_type import device_bases, device_instantiation
from torch_testing_ext._engine.fresh import supervisor
from torch_testing_ext.common_device_type import (
    deviceCountAtLeast,
    dtypes,
    instantiate_device_type_tests,
    onlyAccelerator,
    onlyCPU,
    onlyCUDA,
    onlyOn,
)
from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import TestCase, decorateIf, parametrize, subtest

from fixtures.fake_devices import pretend_accelerator, pretend_facts


def instantiate(generic, **options):
    """The classes instantiate_device_type_tests defines for ``generic``, by name."""
    scope = {generic.__name__: generic}
    instantiate_device_type_tests(generic, scope, **options)
    return scope


def generated_tests(cls):
    return sorted(name for name in vars(cls) if name.startswith("test"))


def run_all(cls):
    return unittest.defaultTestLoader.loadTestsFromTestCase(cls).run(unittest.TestResult())


def skip_reasons(result):
    return {test.id().rsplit(".", 1)[-1]: reason for test, reason in result.skipped}


class TestInstantiation(TestCase):
    def test_cpu_class_with_dtypes(self):
        seen = []

        class TestFoo(TestCase):
            @dtypes(torch.float32, torch.int64)
            def test_add(self, device, dtype):
                seen.append((type(self).__name__, device, dtype))
                self.assertEqual(torch.ones(2, device=device, dtype=dtype) + 1, [2, 2])

            def test_plain(self, device):
                seen.append((type(self).__name__, device))

            def test_no_device(self):
                seen.append((type(self).__name__,))

            def helper(self):
                return "kept"

        with pretend_accelerator(None):
            scope = instantiate(TestFoo)
        self.assertEqual(list(scope), ["TestFooCPU"])
        cls = scope["TestFooCPU"]
        self.assertEqual(generated_tests(cls), ["test_add_cpu_float32", "test_add_cpu_int64",
                                           "test_no_device_cpu", "test_plain_cpu"])
        self.assertEqual((cls.__module__, cls.__qualname__, cls.device_type), (__name__, "TestFooCPU", "cpu"))
        self.assertFalse([name for name in vars(TestFoo) if name.startswith("test")])
        result = run_all(cls)
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(sorted(seen, key=str), sorted([
            ("TestFooCPU", "cpu", torch.float32), ("TestFooCPU", "cpu", torch.int64),
            ("TestFooCPU", "cpu"), ("TestFooCPU",)], key=str))
        self.assertEqual(cls("test_plain_cpu").helper(), "kept")

    def test_one_class_for_the_accelerator(self):
        seen = {}

        class TestFoo(TestCase):
            @dtypes(torch.float16)
            def test_x(self, device, dtype):
                seen[type(self).__name__] = (device, dtype, self.device_type)

        with pretend_accelerator("xpu", 2):
            scope = instantiate(TestFoo)
        self.assertEqual(sorted(scope), ["TestFooCPU", "TestFooXPU"])
        self.assertEqual(generated_tests(scope["TestFooXPU"]), ["test_x_xpu_float16"])
        scope["TestFooXPU"]("test_x_xpu_float16").test_x_xpu_float16()  # touches no device
        self.assertEqual(seen["TestFooXPU"], ("xpu:0", torch.float16, "xpu"))

    def test_only_for_and_except_for(self):
        def generic():
            class TestFoo(TestCase):
                def test_x(self, device):
                    pass

            return TestFoo

        with pretend_accelerator("cuda", 2):
            self.assertEqual(list(instantiate(generic(), only_for="cuda")), ["TestFooCUDA"])
            self.assertEqual(list(instantiate(generic(), only_for=["cpu", "cuda"])), ["TestFooCPU", "TestFooCUDA"])
            self.assertEqual(list(instantiate(generic(), except_for=("cuda",))), ["TestFooCPU"])
            self.assertEqual(list(instantiate(generic(), only_for="xpu")), [])
            with self.assertRaisesRegex(ValueError, "cuda is in both only_for and except_for"):
                instantiate(generic(), only_for=["cuda"], except_for="cuda")

    def test_privateuse1_backend_by_name(self):
        class TestFoo(TestCase):
            def test_x(self, device):
                self.assertEqual(device, "openreg:0")

        with pretend_facts(accelerator="cuda", device_count=1, privateuse1="openreg"), \
                mock.patch.object(device_bases, "privateuse1_backend_name", return_value="openreg"), \
                mock.patch.object(device_instantiation, "privateuse1_backend_name", return_value="openreg"):
            scope = instantiate(TestFoo, only_for="privateuse1")
        # Upstream's ids: the class by the alias, the tests by the backend's name.
        self.assertEqual(list(scope), ["TestFooPRIVATEUSE1"])
        self.assertEqual(generated_tests(scope["TestFooPRIVATEUSE1"]), ["test_x_openreg"])
        self.assertTrue(run_all(scope["TestFooPRIVATEUSE1"]).wasSuccessful())

    def test_privateuse1_fact(self):
        fake_torch = types.SimpleNamespace(openreg=types.SimpleNamespace(is_available=lambda: True))
        with mock.patch("torch_testing_ext._engine._torch_private.privateuse1_backend_name", return_value="openreg"):
            self.assertEqual(devices._available_privateuse1(fake_torch), "openreg")
            fake_torch.openreg.is_available = lambda: False
            self.assertIsNone(devices._available_privateuse1(fake_torch))
            self.assertIsNone(devices._available_privateuse1(types.SimpleNamespace()))
        self.assertIsNone(devices.privateuse1_type())  # this torch has no out-of-tree backend

    def test_lazy_device_is_not_offered(self):
        class TestFoo(TestCase):
            pass

        with self.assertRaisesRegex(NotImplementedError, "lazy"):
            instantiate(TestFoo, include_lazy=True)

    def test_set_up_class_of_the_generic_class_runs(self):
        calls = []

        class TestFoo(TestCase):
            @classmethod
            def setUpClass(cls):
                super().setUpClass()
                calls.append(cls.__name__)

            def test_x(self, device):
                pass

        with pretend_accelerator(None):
            self.assertTrue(run_all(instantiate(TestFoo)["TestFooCPU"]).wasSuccessful())
        self.assertEqual(calls, ["TestFooCPU"])


class TestDtypes(TestCase):
    def test_tuples_of_dtypes(self):
        seen = []

        class TestFoo(TestCase):
            @dtypes((torch.int8, torch.float32), (torch.int64, torch.float64))
            def test_pair(self, device, dtypes):
                seen.append(dtypes)

        with pretend_accelerator(None):
            cls = instantiate(TestFoo)["TestFooCPU"]
        self.assertEqual(generated_tests(cls), ["test_pair_cpu_int64_float64", "test_pair_cpu_int8_float32"])
        self.assertTrue(run_all(cls).wasSuccessful())
        self.assertEqual(sorted(seen, key=str), [(torch.int64, torch.float64), (torch.int8, torch.float32)])

    def test_per_device_type_dtypes(self):
        class TestFoo(TestCase):
            @dtypes(torch.float32)
            @dtypes(torch.int64, device_type="cpu")
            def test_x(self, device, dtype):
                pass

        with pretend_accelerator("cuda", 1):
            scope = instantiate(TestFoo)
        self.assertEqual(generated_tests(scope["TestFooCPU"]), ["test_x_cpu_int64"])
        self.assertEqual(generated_tests(scope["TestFooCUDA"]), ["test_x_cuda_float32"])

    def test_mistakes(self):
        with self.assertRaises(TypeError):
            dtypes(torch.float32, "float64")
        with self.assertRaises(TypeError):
            dtypes((torch.float32,), torch.float64)
        with self.assertRaisesRegex(ValueError, "given twice"):
            dtypes(torch.float32)(dtypes(torch.int64)(lambda self, device, dtype: None))

        class TestFoo(TestCase):
            @dtypes(torch.int64, device_type="cpu")
            def test_x(self, device, dtype):
                pass

        with self.assertRaisesRegex(ValueError, "@dtypes is needed"):
            instantiate(TestFoo)


class TestWithParametrize(TestCase):
    def test_names_and_decorate_if_sees_device_and_dtype(self):
        seen = []

        class TestFoo(TestCase):
            @parametrize("n", [1, subtest(2, name="two")])
            @decorateIf(unittest.skip("float64 on cpu"),
                        lambda params: params["device"] == "cpu" and params["dtype"] == torch.float64)
            @dtypes(torch.float32, torch.float64)
            def test_p(self, device, dtype, n):
                seen.append((device, dtype, n))

        with pretend_accelerator(None):
            cls = instantiate(TestFoo)["TestFooCPU"]
        self.assertEqual(generated_tests(cls), ["test_p_n_1_cpu_float32", "test_p_n_1_cpu_float64",
                                           "test_p_two_cpu_float32", "test_p_two_cpu_float64"])
        result = run_all(cls)
        self.assertEqual(sorted(skip_reasons(result)), ["test_p_n_1_cpu_float64", "test_p_two_cpu_float64"])
        self.assertEqual(sorted(seen, key=str), [("cpu", torch.float32, 1), ("cpu", torch.float32, 2)])


class TestDeviceDecorators(TestCase):
    def cases(self):
        class TestFoo(TestCase):
            @onlyCPU
            def test_cpu(self, device):
                pass

            @onlyCUDA
            def test_cuda(self, device):
                pass

            @onlyAccelerator
            def test_accelerator(self, device):
                pass

            @onlyOn(["xpu", "cuda"])
            def test_on(self, device):
                pass

        return TestFoo

    def test_only_decorators_on_cpu(self):
        with pretend_accelerator(None):
            cls = instantiate(self.cases())["TestFooCPU"]
        self.assertEqual(skip_reasons(run_all(cls)), {
            "test_cuda_cpu": "Only runs on cuda, not on cpu",
            "test_accelerator_cpu": "onlyAccelerator: doesn't run on CPU or meta devices",
            "test_on_cpu": "Only runs on xpu/cuda, not on cpu",
        })

    def test_only_decorators_on_an_accelerator(self):
        with pretend_accelerator("xpu", 1):
            cls = instantiate(self.cases())["TestFooXPU"]
        self.assertEqual(skip_reasons(run_all(cls)), {
            "test_cpu_xpu": "Only runs on cpu, not on xpu",
            "test_cuda_xpu": "Only runs on cuda, not on xpu",
        })

    def test_device_count_at_least(self):
        seen = []

        class TestFoo(TestCase):
            @deviceCountAtLeast(1)
            def test_one(self, devices):
                seen.append(devices)

            @deviceCountAtLeast(2)
            def test_two(self, devices):
                seen.append(devices)

        with pretend_accelerator("cuda", 3):
            scope = instantiate(TestFoo)
            cpu, cuda = scope["TestFooCPU"], scope["TestFooCUDA"]
            self.assertEqual(skip_reasons(run_all(cpu)), {"test_two_cpu": "fewer than 2 devices detected (cpu: 1)"})
            self.assertEqual(skip_reasons(run_all(cuda)), {})
        self.assertEqual(sorted(seen), [["cpu"], ["cuda:0", "cuda:1", "cuda:2"], ["cuda:0", "cuda:1", "cuda:2"]])

    def test_device_count_at_least_twice_is_a_mistake(self):
        with self.assertRaisesRegex(ValueError, "given twice"):
            deviceCountAtLeast(1)(deviceCountAtLeast(2)(lambda self, devices: None))

    def test_multi_process_device_class_skips_before_ranks_start(self):
        class TestFoo(MultiProcessTestCase):
            world_size = 2

            @onlyCUDA
            def test_x(self, device):
                raise AssertionError("must not run")

        with pretend_accelerator(None):
            cls = instantiate(TestFoo)["TestFooCPU"]
        with mock.patch.object(supervisor, "run_ranks", side_effect=AssertionError("a rank started")):
            result = run_all(cls)
        self.assertEqual(skip_reasons(result), {"test_x_cpu": "Only runs on cuda, not on cpu"})


class TestInstantiatedHere(TestCase):
    """Instantiated below for this machine's device types; a real use of the API."""

    @dtypes(torch.float32, torch.float64)
    def test_ones(self, device, dtype):
        tensor = torch.ones(2, device=device, dtype=dtype)
        self.assertEqual((tensor.dtype, tensor.device.type), (dtype, self.device_type))

    def test_device_names_the_class_device_type(self, device):
        self.assertEqual(torch.device(device).type, self.device_type)
        self.assertEqual(type(self).__name__, f"TestInstantiatedHere{self.device_type.upper()}")


instantiate_device_type_tests(TestInstantiatedHere, globals())


class TestInstantiatedHereIsGone(TestCase):
    def test_generic_class_removed_and_cpu_class_defined(self):
        self.assertNotIn("TestInstantiatedHere", globals())
        self.assertIn("test_ones_cpu_float64", vars(globals()["TestInstantiatedHereCPU"]))
