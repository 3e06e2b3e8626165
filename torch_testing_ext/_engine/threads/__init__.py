"""Thread ranks: each test on rank threads of the test's own process (``MultiThreadedTestCase``).

- ``rank_threads``: one test body on N rank threads: outcomes, fail-fast, timeouts with
  stacks, no thread left behind;
- ``spawn_threads``: ``spawn_threads_and_init_comms``, the decorator for a plain TestCase;
- ``thread_world``: ``ThreadWorld``, each test's rank threads (a ``worlds.world.World``);
- ``threaded_test_case``: ``MultiThreadedTestCase``, the test-facing class.
"""
