"""Sharded-tensor test bases and what their bodies use (behind
``distributed._shard.sharded_tensor`` and its ``_test_st_common``/``_test_ops_common``).

- ``sharded_test_base``: ``ShardedTensorTestBase`` (``init_pg``, ``init_rpc``, ``init_comms``,
  ``destroy_comms``, ``assert_sharded_tensor_equal``) and ``TEST_GPU_NUM``;
- ``comms_decorator``: ``with_comms``, the default group (and RPC) around a test method,
  skipped before any rank starts when its backend needs accelerators the machine lacks;
- ``spec_makers``: the chunk and enumerable sharding specs tests iterate over, placed on the
  machine's accelerator (``cpu`` without one), and where a rank's chunk of a weight starts;
- ``sharded_models``: ``MyShardedModel1``/``MyShardedModel2``, modules holding sharded tensors;
- ``megatron_model``: ``SimpleMegatronLM``, two linear layers for sharding-plan tests;
- ``op_helpers``: ``clone_module_parameter`` and ``gen_binary_op_func``.
"""
