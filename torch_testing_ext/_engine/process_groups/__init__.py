"""Every process group and store the harness makes or provides: rendezvous, the threaded
backend of thread ranks, the fake and mock groups, and the one place that destroys groups.

- ``c10d_world_per_thread``: ``ThreadLocalWorld``; installing and uninstalling a c10d world per thread;
- ``collective_exchange``: where the rank threads' calls meet: matching, async works,
  send/recv, and the abort that wakes every waiting rank;
- ``collective_math``: what each collective does to the ranks' tensors once all have called;
- ``debug_levels``: ``with_dist_debug_levels``, a test once per ``TORCH_DISTRIBUTED_DEBUG``;
- ``dummy_process_group``: ``DummyProcessGroup``, a rank and a size without peers;
- ``fake_store``: ``FakeStore`` for the ``fake`` backend (registered on import);
- ``gloo_device``: ``create_device``, the network device of a gloo group;
- ``mock_process_group``: ``with_fake_comms``, ``with_dist``, ``MockProcessGroup``: a fake world
  in one process;
- ``ports``: ``find_free_port`` and ``retry_on_connect_failures``, for tests that use TCP;
- ``rendezvous``: ``init_method``s that never use a fixed port; a real world-size-1 group;
- ``tcp_store``: ``create_tcp_store`` on a free port, and ``tp_transports`` (tensorpipe);
- ``teardown``: the one place that destroys process groups (and keeps them alive in a rank
  until it is safe to drop them);
- ``threaded_pg``: ``ThreadedProcessGroup``, the ``threaded`` backend;
- ``torchcomms_group``: ``setup_torchcomms_pg``, a group over a torchcomms communicator (skips
  without torchcomms).
"""
