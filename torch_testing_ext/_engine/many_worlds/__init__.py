"""Many worlds, one answer: one test run at several world sizes, its recorded values compared.

- ``worlds_spec``: what ``@pytest.mark.worlds(...)`` and ``across_worlds(...)`` ask for, checked
  (torch-free);
- ``value_records``: ``compare(name, value)`` in a rank, each call a record in the rank's file;
- ``values``: a compared value as plain data on its way out of a rank (a DTensor as its shard),
  and put together again in the test process (the DTensor's full tensor, without a collective);
- ``agreement``: whether two values agree (``torch.testing.assert_close``), and by how much
  they differ;
- ``divergence``: the first value, in execution order, on which the worlds or one world's ranks
  part, and each step's difference per world;
- ``divergence_report``: how that reads (the first divergence, then a table of steps);
- ``across``: the test run in each world, and its one verdict;
- ``unittest_worlds``: ``across_worlds`` and ``self.compare`` for ``MultiProcessTestCase``.

pytest's side (the marker, the ``compare`` fixture, fresh, kept and thread ranks) is in
``pytest_native``.
"""
