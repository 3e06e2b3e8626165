"""torch_testing_ext: a public, version-stable harness for PyTorch distributed tests.

The top level holds the modules tests import. Upstream-named faces mirror
``torch.testing._internal`` (``common_utils``, ``common_distributed``, ``common_device_type``,
``common_fsdp``, ``common_cuda``, ``inductor_utils``, ``triton_utils``, ``dynamo_test_case``, and
the package ``distributed``) so that an upstream test moves here by rewriting its imports;
``devices`` (machine facts), ``fake_ddp``, ``cpu_compat`` and ``dtensor`` are ours.

The machinery lives in subpackages, each named for what it holds, on floors that import only
downwards (README's Layout lists them): ``ranks`` (the torch-free rank core), ``testcase``
(TestCase), ``skips``, ``process_groups``, ``file_runner`` (run_tests), ``reporting``
(statuses, JUnit XML, stacks), ``process_tree``, the four ways of running ranks
(``fresh_ranks``, ``kept_ranks``, ``thread_ranks``, ``launcher``), the bases
(``distributed_bases``, ``dtensor_bases``, ``fsdp_bases``, ``device_type``, ``dynamo``),
``models``, and the tools: ``driver`` (the shard driver), ``pytest_plugin`` and ``migrate``.
Every private torch or CPython access is in ``_torch_private``.
"""

__version__ = "0.1.0"
