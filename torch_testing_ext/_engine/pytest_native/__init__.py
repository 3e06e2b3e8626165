"""pytest tests on N ranks (``@pytest.mark.world_size``): the marker, the fixtures, where the
ranks run, and each rank's own pytest session.

- ``item_state``: what a marked test carries between the hooks, its item and its worlds;
- ``left_the_test``: ``KeyboardInterrupt`` and ``pytest.exit()`` in a rank's test, its outcome
  rather than a stop of the session;
- ``phase_record``: how a test ended on a rank, from the reports of its phases;
- ``pytest_worlds``: where a marked test's ranks run, and its verdict (imports torch, when a
  marked test runs);
- ``rank_failure_report``: how a test whose ranks did not all pass reads in pytest's report;
- ``rank_fixtures``: ``rank``, ``world_size``, ``device``, ``backend``, ``process_group``;
- ``rank_session``: what a rank process runs: a pytest session of its own, as that rank;
- ``rank_streams``: a rank session's terminal on a file of its own, and the streams a test
  closed reopened;
- ``ranks_function``: a marked test as the test process runs it (fresh, kept, thread or
  launched ranks);
- ``subtest_reports``: subtest reports that pytest-xdist can send (their arguments as plain
  values);
- ``world_size_mark``: ``@pytest.mark.world_size(n | [n, m], timeout=, ranks=, allow_cpu=)``,
  checked once per session (a bad one errors its own test).
"""
