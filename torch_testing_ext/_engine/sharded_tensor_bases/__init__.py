"""Sharded-tensor (``torch.distributed._shard``) test bases and what their bodies use.

- ``comms_decorator``: ``with_comms``, the default group (and RPC) around a test method,
  skipped before any rank starts when its backend needs accelerators the machine lacks;
- ``op_helpers``: ``clone_module_parameter`` and ``gen_binary_op_func``;
- ``sharded_test_base``: ``ShardedTensorTestBase`` (``init_pg``, ``init_rpc``, ``init_comms``,
  ``destroy_comms``, ``assert_sharded_tensor_equal``) and ``TEST_GPU_NUM``;
- ``spec_makers``: the chunk and enumerable sharding specs tests iterate over, placed on the
  machine's accelerator (``cpu`` without one), and where a rank's chunk of a weight starts.
"""
