"""Fresh ranks: each test method on N rank processes started for it (``MultiProcessTestCase``).

- ``fork_server``: the preloaded fork server that ranks are forked from;
- ``server_preload``: the server's last preload (the test script itself, inductor if asked);
- ``collectives_preload``: the server wraps the collectives before it imports test modules;
- ``rank_process``: what runs inside a rank, up to its ``RankOutcome``;
- ``supervisor``: starting, waiting, fail-fast, timeouts with stacks, cleanup;
- ``leftovers``: processes the ranks left running: found after the test, named, killed;
- ``fresh_world``: ``FreshWorld``, the ranks of one test (a ``ranks.world.World``);
- ``multiprocess_test_case``: ``MultiProcessTestCase``, the test-facing class.
"""
