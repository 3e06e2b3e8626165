"""torch_testing_ext: a public, version-stable harness for PyTorch distributed tests.

The top level holds the modules tests import. Upstream-named faces mirror
``torch.testing._internal`` (``common_utils``, ``common_distributed``, ``common_device_type``,
``common_fsdp``, ``common_cuda``, ``inductor_utils``, ``triton_utils``, ``dynamo_test_case``, and
the package ``distributed``) so that an upstream test moves here by rewriting its imports;
``devices`` (machine facts), ``fake_ddp``, ``cpu_compat`` and ``dtensor`` are ours.

The machinery lives in subpackages, each named for what it does: ``case`` (TestCase),
``skips``, ``run`` (run_tests), ``reporting`` (statuses, JUnit XML), ``multiprocess`` (process
ranks), ``threads`` (thread ranks), ``process_groups``, ``distributed_cases``, ``dtensor_cases``,
``fsdp_cases``, ``device_type``, ``dynamo``, ``models``, ``migrate`` and ``driver``
(run_test.py). Every private torch or CPython access is in ``_torch_private``.
"""

__version__ = "0.1.0"
