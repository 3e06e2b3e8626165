"""Distributed test cases beyond ``MultiProcessTestCase``, and the aids their bodies use.

- ``checkpoint_extensions``: ``Rot13Example`` and ``get_test_extension_registry``, a checkpoint
  stream transform for tests;
- ``dist_backend_suite``: ``DistTestCases``, ``initialize_temp_directories``,
  ``cleanup_temp_dir``: what torch's ``DistributedTest`` suite reads besides the test case;
- ``distributed_test_base``: ``DistributedTestBase``, ranks that create a group per device;
- ``rpc_fixtures``: the RPC agents' test fixtures (TensorPipe, faulty TensorPipe), and
  ``dist_init``, RPC around a test body;
- ``rpc_aids``: ``worker_name``, ``wait_until_node_failure``, the RRef waits, ``initialize_pg``:
  what RPC test bodies call, named as in upstream's ``dist_utils``;
- ``shipped_suites``: ``load_shipped_suite``, the suites torch ships in its wheel run in our
  faces, their harness imports bound to ours, run again in a rank under its environment; and
  ``load_shipped_module``, the data modules beside them (``op_db``), loaded once;
- ``shared_temp_dir``: ``with_temp_dir``, a directory all ranks of a test share;
- ``sparse_reduce_cases``: ``simple_sparse_reduce_tests``, sparse sum-reduce inputs and results;
- ``state_dict_checks``: ``VerifyStateDictMixin``, a distributed state dict against a plain one;
- ``subtests``: ``run_subtests``, one body over every combination of some arguments, and
  ``SubtestsMixin``, the same as a method;
- ``upstream_aids``: ``verify_ddp_error_logged``, ``requires_ddp_rank``, ``init_multigpu_helper``,
  ``get_timeout``, ``with_nccl_blocking_wait``: small aids named as in ``common_distributed``.
"""
