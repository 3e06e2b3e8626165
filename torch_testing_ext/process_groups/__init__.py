"""Process groups in tests: creating them without fixed ports, configuring them, and tearing
them down safely.

- ``rendezvous``: ``init_method``s that never use a fixed port; a real world-size-1 group;
- ``teardown``: the one place that destroys process groups (and keeps them alive in a rank
  until it is safe to drop them);
- ``ports``: ``find_free_port`` and ``retry_on_connect_failures``, for tests that use TCP;
- ``fake_store``: ``FakeStore`` for the ``fake`` backend (registered on import);
- ``gloo_device``: ``create_device``, the network device of a gloo group;
- ``debug_levels``: ``with_dist_debug_levels``, a test once per ``TORCH_DISTRIBUTED_DEBUG``;
- ``tcp_store``: ``create_tcp_store`` on a free port, and ``tp_transports`` (tensorpipe);
- ``torchcomms_group``: ``setup_torchcomms_pg``, a group over a torchcomms communicator (skips
  without torchcomms).
"""
