"""Self-tests of the skip decorators: decided in the test process, before any rank starts."""

import os
from unittest import mock

from torch_testing_ext import devices
from torch_testing_ext._engine.fresh import supervisor
from torch_testing_ext._engine.skips import distributed_skips as dist_skips
from torch_testing_ext._engine.skips.skip_checks import pending_skip
from torch_testing_ext.common_distributed import (
    MultiProcessTestCase,
    import_transformers_or_skip,
    requires_accelerator_dist_backend,
    requires_gloo,
    requires_world_size,
    skip_if_lt_x_gpu,
)
from torch_testing_ext.common_utils import TestCase, slowTest

from fixtures.runs import run_case


class TestDistributedSkips(TestCase):
    def test_parent_side_skip_starts_no_rank(self):
        class Cases(MultiProcessTestCase):
            world_size = 2

            @skip_if_lt_x_gpu(devices.device_count() + 1)
            def test_needs_more_gpus(self):
                raise AssertionError("must not run")

        with mock.patch.object(supervisor, "run_ranks", side_effect=AssertionError("a rank was started")) as launch:
            result = run_case(Cases, "test_needs_more_gpus")
        launch.assert_not_called()
        self.assertEqual(len(result.skipped), 1, result.errors + result.failures)
        self.assertIn("Need at least", result.skipped[0][1])

    def test_allow_cpu_runs_on_cpu_only_machines(self):
        decorated = skip_if_lt_x_gpu(64, allow_cpu=True)(lambda self: "ran")
        reason = pending_skip(type("T", (TestCase,), {"test_x": decorated})("test_x"))
        if devices.accelerator_type() is None:
            self.assertIsNone(reason)
        else:
            self.assertIn("Need at least 64", reason)

    def test_world_size_is_read_from_the_test(self):
        class Cases(MultiProcessTestCase):
            world_size = 2

            @requires_world_size(3)
            def test_three(self):
                raise AssertionError("must not run")

        with mock.patch.object(supervisor, "run_ranks") as launch:
            result = run_case(Cases, "test_three")
        launch.assert_not_called()
        self.assertEqual(result.skipped[0][1], "Test requires world size of 3")

    def test_backend_decorators_follow_device_facts(self):
        class Cases(TestCase):
            @requires_gloo()
            def test_gloo(self):
                pass

            @requires_accelerator_dist_backend(["no-such-backend"])
            def test_accel(self):
                pass

        self.assertEqual(run_case(Cases, "test_accel").skipped[0][1],
                         "No accelerator communication backend available among ['no-such-backend']")
        gloo = run_case(Cases, "test_gloo")
        self.assertEqual(len(gloo.skipped), 0 if devices.backend_available("gloo") else 1)

    def test_class_decorator_skips_every_test(self):
        @requires_accelerator_dist_backend(["no-such-backend"])
        class Cases(TestCase):
            def test_a(self):
                pass

            def test_b(self):
                pass

        for name in ("test_a", "test_b"):
            self.assertEqual(len(run_case(Cases, name).skipped), 1)

    def test_transformers_missing_is_a_skip(self):
        class Cases(TestCase):
            @import_transformers_or_skip()
            def test_bert(self):
                pass

        with mock.patch.object(dist_skips, "transformers_import_error", return_value="ImportError: none"):
            result = run_case(Cases, "test_bert")
        self.assertEqual(result.skipped[0][1], "Unable to import transformers")

    def test_slow_test_needs_opt_in(self):
        class Cases(TestCase):
            @slowTest
            def test_slow(self):
                pass

        with mock.patch.dict(os.environ, {"PYTORCH_TEST_WITH_SLOW": "0"}):
            self.assertEqual(len(run_case(Cases, "test_slow").skipped), 1)
        with mock.patch.dict(os.environ, {"PYTORCH_TEST_WITH_SLOW": "1"}):
            self.assertEqual(len(run_case(Cases, "test_slow").skipped), 0)


class TestStaticSkipsComeFirst(TestCase):
    """``static_skip_if`` (upstream's ``unittest.skipIf``, behind ``skip_but_pass_in_sandcastle_if``)
    is a static skip: its reason wins over a check decided at run time, even an outer one, and
    over our ``skip_if``, which stays a check whatever its condition."""

    def cases(self):
        from torch_testing_ext._engine.skips.skip_checks import skip_if, skip_when, static_skip_if

        class Cases(MultiProcessTestCase):
            world_size = 2

            @skip_when(lambda test: "decided at run time")
            @skip_if(True, "a check whose condition holds already")
            @static_skip_if(True, "static, known at import")
            def test_both(self):
                raise AssertionError("must not run")

            @skip_when(lambda test: "decided at run time")
            @static_skip_if(False, "never")
            def test_runtime_only(self):
                raise AssertionError("must not run")

        return Cases

    def test_pending_skip_and_unittest_give_the_static_reason(self):
        cases = self.cases()
        self.assertEqual(pending_skip(cases("test_both")), "static, known at import")
        self.assertEqual(pending_skip(cases("test_runtime_only")), "decided at run time")
        for name, why in (("test_both", "static, known at import"), ("test_runtime_only", "decided at run time")):
            result = run_case(cases, name)
            self.assertEqual([reason for _, reason in result.skipped], [why], result.errors + result.failures)
