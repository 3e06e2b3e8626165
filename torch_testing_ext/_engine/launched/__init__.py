"""Launched ranks: each process a launcher (``torchrun``) started runs its rank of every test.

- ``launched_reports``: where a launched rank reports: summary stream, per-rank XML, abort hooks;
- ``launched_run``: ``run_as_launched_rank``, one test on this rank, to the verdict of all ranks;
- ``launched_world``: ``LaunchedWorld``, the ``worlds.world.World`` of a launched process;
- ``launcher_env``: ``LaunchedRank``: whether a launcher started this process, as which rank;
- ``launcher_store``: the job's store as this process sees it, and each test's rendezvous on it;
- ``outcome_exchange``: what the ranks of one test tell each other: directory, outcomes, done;
- ``rank_watchdog``: the deadline of a test: past it, stacks, report and the end of the process.
"""
