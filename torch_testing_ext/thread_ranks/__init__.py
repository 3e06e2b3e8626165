"""Thread ranks: ranks as threads of one process, with real collectives between them (the
machinery behind ``MultiThreadedTestCase`` and ``spawn_threads_and_init_comms``).

- ``c10d_world_per_thread``: ``ThreadLocalWorld``; installing and uninstalling a c10d world per thread;
- ``collective_math``: what each collective does to the ranks' tensors once all have called;
- ``collective_exchange``: where the rank threads' calls meet: matching, async works,
  send/recv, and the abort that wakes every waiting rank;
- ``threaded_pg``: ``ThreadedProcessGroup``, the ``threaded`` backend;
- ``rank_threads``: one test body on N rank threads: outcomes, fail-fast, timeouts with
  stacks, no thread left behind;
- ``thread_world``: ``ThreadWorld``, each test's rank threads (a ``ranks.world.World``);
- ``threaded_test_case``: ``MultiThreadedTestCase``, the test-facing class;
- ``spawn_threads``: ``spawn_threads_and_init_comms``, the decorator for a plain TestCase.
"""
