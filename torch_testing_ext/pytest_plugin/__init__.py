"""The pytest plugin, registered by the ``pytest11`` entry point ``torch_testing_ext``.

Installing the package activates it in every pytest run of that environment (no ``-p``);
``-p no:torch_testing_ext`` turns it off. It imports no torch, so pytest runs that never touch
the harness pay nothing for it.

- ``plugin``: the hooks pytest calls: settings checked before any test, a per-rank
  ``--junitxml`` path under a launcher, rank failures reported from the user's frame, and the
  ``world_size`` marker's tests;
- ``rank_failure_report``: how a test whose ranks did not all pass reads in pytest's report;
- ``world_size_mark``: ``@pytest.mark.world_size(n | [n, m], timeout=, ranks=, allow_cpu=)``,
  checked (a bad one errors its own test);
- ``rank_fixtures``: ``rank``, ``world_size``, ``device``, ``backend``, ``process_group``;
- ``item_state``: what a marked test carries between the hooks, its item and its worlds;
- ``ranks_function``: a marked test as the test process runs it (fresh, kept, thread or
  launched ranks);
- ``pytest_worlds``: where a marked test's ranks run, and its verdict (imports torch, when a
  marked test runs);
- ``rank_session``: what a rank process runs: a pytest session of its own, as that rank;
- ``phase_record``: how a test ended on a rank, from the reports of its phases;
- ``left_the_test``: ``KeyboardInterrupt`` and ``pytest.exit()`` in a rank's test, its outcome
  rather than a stop of the session;
- ``rank_streams``: a rank session's terminal on a file of its own, and the streams a test
  closed reopened;
- ``subtest_reports``: subtest reports that pytest-xdist can send (their arguments as plain
  values).
"""
