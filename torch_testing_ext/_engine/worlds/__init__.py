"""The torch-free core every way of running ranks shares: the World interface, the settings,
what a rank is told, and how rank outcomes make a verdict.

- ``interrupts``: SIGTERM as an exception, and the exit status after an interrupt;
- ``outcomes``: ``RankOutcome``, how the ranks' outcomes combine into a ``Verdict``, and how a
  verdict ends the test (``RankFailure``, ``RankError``);
- ``rank_facts``: what a rank is told (``RankTask``, ``RankFacts``), which rank this process
  or rank thread is (``current_rank_facts``), and the hooks a rank calls;
- ``settings``: the environment settings, each checked where it is read, and the defaults
  (world size, timeout) every way of running ranks shares;
- ``world``: ``World``, the one interface of the four ways of running ranks, the
  ``RunSettings`` a test hands it, and ``WorldDir``, the directory a world owns.
"""
