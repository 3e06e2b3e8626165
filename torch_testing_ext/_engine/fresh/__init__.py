"""Fresh ranks: each test on rank processes forked for it from a preloaded fork server
(``MultiProcessTestCase``).

- ``fork_server``: the preloaded fork server that ranks are forked from;
- ``fresh_world``: ``FreshWorld``, the ranks of one test and their directory (a
  ``worlds.world.World``);
- ``leftovers``: processes the ranks left running: found after the test, named, killed;
- ``multiprocess_test_case``: ``MultiProcessTestCase``, the test-facing class;
- ``rank_process``: what runs inside a rank, up to its ``RankOutcome``;
- ``server_preload``: the server's last preload (the test script itself, inductor if asked);
- ``supervisor``: starting, waiting, fail-fast, timeouts with stacks, cleanup;
- ``upstream_entry``: upstream's rank entry ``_run``, for classes that override it.
"""
