"""FSDP test bases: what ``common_fsdp`` offers to tests of ``fully_shard`` (FSDP2) and
``FullyShardedDataParallel`` (FSDP1), on any device (CPU ranks with gloo here); the test
models are in ``models``.

- ``init_modes``: ``FSDPInitMode``, ``DEVICEInitMode`` and ``get_devtype``;
- ``fsdp_test_case``: ``FSDPTest``, ranks with a default group made before each test;
- ``fsdp_continuous``: ``FSDPTestContinuous``, ranks and default group kept for the class;
- ``fsdp_thread_case``: ``FSDPTestMultiThread``, ranks as threads of the test's process;
- ``collective_patches``: ``patch_all_gather`` and the other context managers that swap a
  collective or a ``fully_shard`` step for the test's own function;
- ``sharded_parity``: ``check_sharded_parity``, ``reduce_scatter_with_assert``, ``get_full_params``;
- ``compiled_fsdp``: ``compiled_fsdp_test``, a test run eagerly and with compiled compute;
- ``fsdp_cpu_limits``: ``requires_pinned_memory``, the one ``fully_shard`` feature CPU ranks lack.
"""
