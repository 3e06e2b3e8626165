"""DTensor test bases and what their bodies use.

- ``converter``: ``DTensorConverter``, an op's arguments under every sharding;
- ``dtensor_continuous``: ``DTensorContinuousTestBase``: ranks and group kept for the class;
- ``dtensor_facts``: ``DEVICE_TYPE``, ``PG_BACKEND``, ``NUM_DEVICES``: the device facts for meshes;
- ``dtensor_test_base``: ``DTensorTestBase`` (``init_pg``/``destroy_pg``, ``build_device_mesh``),
  its mixin of op checks, ``skip_unless_torch_gpu``;
- ``group_per_rank``: ``DTensorOpTestBase``: fresh ranks with a group made before each test;
- ``local_tensor_cases``: the LocalTensor bases (every rank simulated in one process);
- ``local_tensor_variants``: ``create_local_tensor_test_class``, ``map_local_for_rank``;
- ``shard_order``: distributing and redistributing to a given shard order;
- ``sharding_rules``: ``validate_sharding_rule_sample`` (forward, backward) and
  ``op_strategy_context``, a sharding rule checked on one sample or swapped in for a block;
- ``with_comms``: the decorator that runs a test method with the default group.
"""
