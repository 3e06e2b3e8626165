"""FSDP test bases (``fully_shard`` and ``FullyShardedDataParallel``) and their checks.

- ``collective_patches``: ``patch_all_gather`` and the other context managers that swap a
  collective or a ``fully_shard`` step for the test's own function;
- ``compiled_fsdp``: ``compiled_fsdp_test``, a test run eagerly and with compiled compute;
- ``fsdp1_parity``: ``FSDP1ParityMixin`` (``_test_fsdp_parity``, ``_train_for_several_steps``),
  FSDP1 training against DDP, and ``FSDPTestMixin``, what ``FSDPTest`` and ``FSDPTestContinuous``
  share;
- ``fsdp1_state_helpers``: ``_assert_module_states``, ``_zero_model``, ``_get_state_dict``,
  ``_broadcast_state_dict``, ``_move_to_device``, ``_maybe_wrap_fsdp``, ``subtest_name``;
- ``fsdp_continuous``: ``FSDPTestContinuous``, ranks and default group kept for the class;
- ``fsdp_cpu_limits``: ``requires_pinned_memory``, the one ``fully_shard`` feature CPU ranks lack;
- ``fsdp_test_case``: ``FSDPTest``, ranks with a default group made before each test;
- ``fsdp_thread_case``: ``FSDPTestMultiThread``, ranks as threads of the test's process;
- ``init_modes``: ``FSDPInitMode``, ``DEVICEInitMode``, ``get_devtype`` and the device facts;
- ``sharded_parity``: ``check_sharded_parity``, ``reduce_scatter_with_assert``, ``get_full_params``.
"""
