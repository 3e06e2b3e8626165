"""Launcher mode: a test process started by ``torchrun`` (or any launcher that sets ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``) runs each multi-process
test in itself, as its rank, with every rank of the job; nothing is spawned.

- ``launcher_store``: the job's store as this process sees it, and each test's rendezvous on it;
- ``outcome_exchange``: what the ranks of one test tell each other: directory, outcomes, done;
- ``rank_watchdog``: the deadline of a test: past it, stacks, report and the end of the process;
- ``launched_run``: ``run_as_launched_rank``, one test on this rank, to the verdict of all ranks;
- ``launched_world``: ``LaunchedWorld``, the ``ranks.world.World`` of a launched process;
- ``pytest_ranks``: a pytest plugin (``-p``): per-rank ``--junitxml`` paths under a launcher.
"""
