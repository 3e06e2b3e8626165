"""Launcher mode: a test process started by ``torchrun`` (or any launcher that sets ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``) runs each multi-process
test in itself, as its rank, with every rank of the job; nothing is spawned (the engine's
``launched``).

- ``pytest_ranks``: a pytest plugin (``-p``): per-rank ``--junitxml`` paths under a launcher.
"""
