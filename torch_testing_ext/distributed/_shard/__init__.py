"""Faces at ``torch.testing._internal.distributed._shard``.

- ``sharded_tensor``: ``ShardedTensorTestBase``, ``with_comms``, ``TEST_GPU_NUM``, and its
  ``_test_st_common`` and ``_test_ops_common`` (from ``sharded_tensor_bases``);
- ``test_common``: ``SimpleMegatronLM``, the module sharding-plan tests shard (from
  ``sharded_tensor_bases``).
"""
