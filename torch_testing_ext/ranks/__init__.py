"""The rank core: what every way of running ranks shares. Torch-free, the floor the rest
stands on.

- ``rank_facts``: what a rank is told (``RankTask``, ``RankFacts``), which rank this process
  or rank thread is (``current_rank_facts``), and the hooks a rank calls;
- ``world``: ``World``, the one interface of the four ways of running ranks, and the
  ``RunSettings`` a test hands it;
- ``outcomes``: ``RankOutcome``, how the ranks' outcomes combine into a ``Verdict``, and how a
  verdict ends the test (``RankFailure``, ``RankError``);
- ``collective_ledger``: ``Call`` and ``Ledger``: a rank's collective calls, and its ledger's files;
- ``ledger_report``: where the ranks' collective calls first differ, in a few lines;
- ``skip_codes``: upstream's ``TEST_SKIPS`` exit codes;
- ``settings``: the environment settings, each checked where it is read;
- ``interrupts``: SIGTERM as an exception, and the exit status after an interrupt;
- ``launcher_env``: ``LaunchedRank``: whether a launcher started this process, as which rank;
- ``launched_reports``: where a launched rank reports: summary stream, per-rank XML, abort hooks;
- ``skip_checks``: skips decided before any rank starts (``skip_when``, ``skip_if``,
  ``pending_skip``, ``skip_or_check_settings``).
"""
