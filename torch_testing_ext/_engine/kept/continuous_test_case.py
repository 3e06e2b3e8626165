"""``MultiProcContinuousTest``: a class's tests share ``world_size`` rank processes and one
process group.

Starting ranks and making a process group is most of what a small distributed test costs.
Here the ranks start once per class (forked from the preloaded server, when its first test
runs) and make the default group once, with the class's ``_init_pg``; each test method is
then sent to every rank. The outcome rules are those of ``MultiProcessTestCase``: every rank
counts, a failing rank is named with its traceback and the output it wrote during the test,
a rank that dies or hangs fails that test within the class timeout (with its stack). After
any test that did not end alike on every rank, passed or skipped, the world is closed and the
next test gets a fresh one: a failure never skips the rest of the class, and never leaves a
half-finished collective behind. A test that leaves state behind in its rank (a process
group, an environment variable, a thread, a non-default stream, device memory) fails, naming
it. Every test starts from the same seeds.

Under a launcher (``torchrun``) the launcher keeps the processes: each test runs in this
process as its launched rank (``torch_testing_ext.launcher``), with the class's group made by
``_init_pg`` before the test and destroyed after it, on the launcher's rendezvous.

Example::

    class TestAllReduce(MultiProcContinuousTest):
        world_size = 2

        def test_sum(self):
            t = torch.ones(2, device=self.device)
            dist.all_reduce(t)
            self.assertEqual(t, [2.0, 2.0])
"""

from __future__ import annotations

import datetime
import os
import warnings
from typing import Any, ClassVar

import torch.distributed as dist

from ... import devices
from .._torch_private import test_method_name
from ..fresh.leftovers import LeftoverProcessWarning
from ..fresh.rank_process import run_between_hooks
from ..launched.launched_world import LaunchedWorld
from ..launched.launcher_env import launched_rank
from ..process_groups.rendezvous import rendezvous_init_method
from ..testcase.ranks_testcase import RanksTestCase
from ..testcase.tensor_testcase import current_seed
from ..worlds.rank_facts import current_rank_facts, rank_device_index
from ..worlds.world import World
from .kept_world import ClassWorlds

__all__ = ["MultiProcContinuousTest", "MultiProcContinousTest", "DEFAULT_CONTINUOUS_TIMEOUT",
           "CPU_WORLD_SIZE"]

__unittest = True

DEFAULT_CONTINUOUS_TIMEOUT = datetime.timedelta(seconds=120)  # upstream's default
CPU_WORLD_SIZE = 2  # ranks of a class that leaves world_size unset, without an accelerator
_UNSET = -2


def _seconds(value: Any) -> Any:
    return value.total_seconds() if isinstance(value, datetime.timedelta) else value


class MultiProcContinuousTest(RanksTestCase):
    """Run every test method of the class on the same ``world_size`` rank processes.

    Class attributes, as upstream: ``world_size`` (unset: one rank per accelerator, or
    ``CPU_WORLD_SIZE`` ranks without one), ``timeout`` (a ``timedelta`` or seconds, default
    120 s: each test's limit and the process group's), and inside a rank ``rank``,
    ``world_size``, ``rdvz_file`` and ``pg`` (the class's default group). Class methods a
    subclass may override: ``backend_str()`` (None: torch's default for the devices),
    ``opts()`` (the group's options), ``device_type()`` and ``_init_pg(rank, world_size,
    rdvz_file)`` (runs once in each rank when its world starts; call ``super()``).
    ``setUpClass``/``tearDownClass``, ``setUp``/``tearDown`` run in the test's own process;
    ``setUpRank()``/``tearDownRank()`` run in each rank around each test.
    """

    MAIN_PROCESS_RANK = -1
    world_size: int = _UNSET
    # Upstream's class attribute, which each rank sets for itself (a classmethod may read it).
    rank: int = MAIN_PROCESS_RANK
    timeout: datetime.timedelta | float = DEFAULT_CONTINUOUS_TIMEOUT  # type: ignore[assignment]  # upstream takes a timedelta
    rdvz_file: str | None = None
    pg: Any = None
    _worlds: ClassVar[ClassWorlds]  # in the test's process, once the class's first test ran

    # -- upstream's class hooks ----------------------------------------------------------------

    @classmethod
    def backend_str(cls) -> str | None:
        """The process-group backend; None lets torch choose for the machine's devices."""
        return None

    @classmethod
    def device_type(cls) -> str:  # type: ignore[override]  # upstream's classmethod, not a property
        """The device type the ranks use (the accelerator's, else ``"cpu"``)."""
        return devices.device_type()

    @classmethod
    def opts(cls, high_priority_stream: bool = False) -> Any:
        """Options for the class's process group (None: the backend's defaults)."""
        return None

    @classmethod
    def _init_pg(cls, rank: int, world_size: int, rdvz_file: str) -> None:
        """Make this rank's default group (runs in each rank). The ranks meet through
        :func:`rendezvous_init_method` (a file of the world, or a launcher's store);
        ``rdvz_file`` is upstream's parameter: a path every rank agrees on, for an override
        that makes its own ``FileStore``."""
        index = rank_device_index(rank)  # the local rank under a launcher
        os.environ["LOCAL_RANK"] = str(index)  # as torchrun sets it: init_device_mesh reads it
        if devices.accelerator_type() is not None and index < devices.device_count():
            devices.select_rank_device(index)
        dist.init_process_group(backend=cls.backend_str(), init_method=rendezvous_init_method(),
                                world_size=world_size, rank=rank, pg_options=cls.opts(),
                                timeout=datetime.timedelta(seconds=_seconds(cls.timeout)))
        cls.pg = dist.group.WORLD

    # -- hooks -----------------------------------------------------------------------------------

    def setUpRank(self) -> None:
        """Runs in each rank before each test method; override to prepare rank state."""

    def tearDownRank(self) -> None:
        """Runs in each rank after each test method, whatever its outcome."""

    # -- the test's own process ----------------------------------------------------------------

    @classmethod
    def tearDownClass(cls) -> None:
        worlds = cls.__dict__.get("_worlds")
        if worlds is not None:
            del cls._worlds
            leftovers = worlds.close()
            if leftovers:
                # stacklevel 1: the message names the class; the caller is unittest's suite
                warnings.warn(LeftoverProcessWarning(f"{cls.__qualname__}: {leftovers}"), stacklevel=1)
        super().tearDownClass()

    def _world_size(self) -> int:
        if self.world_size != _UNSET:
            return self.world_size
        return devices.device_count() if devices.accelerator_type() else CPU_WORLD_SIZE

    def _timeout_value(self) -> object:
        return _seconds(self.timeout)

    def _world(self) -> World:
        """The class's kept ranks; under a launcher, this process as its rank, with the
        class's group made for the test and destroyed after it (the launcher keeps the
        processes)."""
        cls = type(self)
        launched = launched_rank()
        if launched is not None:
            return LaunchedWorld(launched, self._with_class_group)
        worlds = cls.__dict__.get("_worlds")
        if worlds is None:
            worlds = cls._worlds = ClassWorlds(cls)
        return worlds

    def _with_class_group(self) -> None:
        """The test body of a launched rank: the class's group, then the method between hooks."""
        cls = type(self)
        facts = current_rank_facts()
        assert facts is not None  # entered by the launched run
        cls.rank, cls.world_size = facts.rank, facts.world_size
        cls._init_pg(facts.rank, facts.world_size, facts.file_name)
        run_between_hooks(self, test_method_name(self), current_seed())


# Upstream's first spelling (renamed by pytorch PR #160892), for suites that still import it.
MultiProcContinousTest = MultiProcContinuousTest
