"""Whether a launcher started this process as one rank of a job, and which rank.

``torchrun`` (and any launcher that follows its convention) starts one process per rank and
tells it ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``. Such a
process runs each multi-process test as that rank instead of spawning ranks of its own.
``RANK`` decides: when it is set, the other four are required, and every value is checked
(a bad or missing one is a ``SettingError`` naming the variable). The variables are read as
they were when this module was first imported, so a test that sets them later changes
nothing. Torch-free.

Example::

    launched = launched_rank()      # None unless a launcher started this process
    if launched is not None:
        print(f"rank {launched.rank} of {launched.world_size}")
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from ..worlds import settings
from ..worlds.rank_facts import rank_process_facts
from ..worlds.settings import SettingError

__all__ = ["LaunchedRank", "launched_rank", "check_every_setting", "too_few_ranks_reason", "LAUNCHER_ENV_NAMES",
           "AGENT_STORE_ENV", "RESTART_COUNT_ENV"]

__unittest = True

# torchrun's agent hosts the store at MASTER_ADDR:MASTER_PORT when this says "True".
AGENT_STORE_ENV = "TORCHELASTIC_USE_AGENT_STORE"
RESTART_COUNT_ENV = "TORCHELASTIC_RESTART_COUNT"
_RESTART_COUNT = settings.EnvSetting(RESTART_COUNT_ENV, settings.non_negative_integer, 0)
LAUNCHER_ENV_NAMES = tuple(setting.name for setting in settings.LAUNCHER_ENV)
_READ_AT_IMPORT = {name: os.environ[name]
                   for name in (*LAUNCHER_ENV_NAMES, AGENT_STORE_ENV, RESTART_COUNT_ENV)
                   if name in os.environ}


@dataclasses.dataclass(frozen=True)
class LaunchedRank:
    """The rank a launcher started this process as, and where the job's store is.

    ``agent_store``: the launcher's agent hosts the store (torchrun), so every rank is a
    client of it; otherwise rank 0 hosts it, as ``env://`` does. ``restart_count``: how many
    times torchrun has restarted the job (its store keys are per attempt).
    """

    rank: int
    world_size: int
    local_rank: int
    master_addr: str
    master_port: int
    agent_store: bool = False
    restart_count: int = 0


def _required(setting: settings.EnvSetting, environ: Mapping[str, str]) -> Any:
    value = setting.get(environ)
    if value is None:
        others = ", ".join(name for name in LAUNCHER_ENV_NAMES if name != "RANK")
        raise SettingError(f"{setting.name} is not set: a launcher that sets RANK must also set {others}")
    return value


def launched_rank(environ: Mapping[str, str] | None = None) -> LaunchedRank | None:
    """The launched rank of this process, or None when no launcher started it (``RANK`` unset)
    or when this process is one of the harness's own rank processes.

    ``environ`` defaults to the environment as it was when this module was imported.
    Raises ``SettingError`` (one line, naming the variable) for a bad or missing value.
    """
    if rank_process_facts() is not None:
        return None
    env = _READ_AT_IMPORT if environ is None else environ
    rank = settings.LAUNCH_RANK.get(env)
    if rank is None:
        return None
    world_size = _required(settings.LAUNCH_WORLD_SIZE, env)
    if rank >= world_size:
        raise SettingError(f"RANK={env['RANK']!r}: expected less than WORLD_SIZE={world_size}")
    return LaunchedRank(
        rank=rank,
        world_size=world_size,
        local_rank=_required(settings.LAUNCH_LOCAL_RANK, env),
        master_addr=_required(settings.MASTER_ADDR, env),
        master_port=_required(settings.MASTER_PORT, env),
        agent_store=env.get(AGENT_STORE_ENV) == "True",
        restart_count=_RESTART_COUNT.get(env),
    )


def check_every_setting() -> None:
    """Raise ``SettingError`` for the first bad environment variable the harness reads: its
    own settings, then (when ``RANK`` is set) the launcher's."""
    settings.check_environment()
    launched_rank()


def too_few_ranks_reason(test_class: str, world_size: int, launched: LaunchedRank) -> str | None:
    """Why a test of ``test_class`` that needs ``world_size`` ranks cannot run on the
    launcher's ranks (None when it can: a test needing fewer runs on the first ones)."""
    if world_size <= launched.world_size:
        return None
    return (f"{test_class} needs {world_size} ranks; the launcher started {launched.world_size} "
            f"(WORLD_SIZE={launched.world_size})")
