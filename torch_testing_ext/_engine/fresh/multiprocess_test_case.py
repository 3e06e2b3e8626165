"""``MultiProcessTestCase``: each test method runs on ``world_size`` fresh rank processes.

In the test's own process (``self.rank == -1``) a test method is replaced by a driver that
decides parent-side skips, forks the ranks from the preloaded server, supervises them and
turns their outcomes into one result. Inside a rank the class is instantiated again and only
the test method runs, between the hooks ``setUpRank()`` and ``tearDownRank()`` and with every
RNG seeded alike; ``setUp``/``tearDown`` run in the test's own process, as upstream.

Upstream-style subclasses that call ``self._spawn_processes()`` in ``setUp`` keep working;
subclasses that don't are spawned all the same. A method decorated with ``across_worlds(1, 2, 4)``
runs in a world of each size and compares what its ranks record with ``self.compare``
(``torch_testing_ext._engine.many_worlds``).

When a launcher (``torchrun``) started this process as one rank of a job, nothing is spawned:
each test runs here as that rank, with every rank of the job, and each reports the verdict of
all ranks (``torch_testing_ext.launcher``).

Example::

    class TestAllReduce(MultiProcessTestCase):
        world_size = 2

        def test_sum(self):
            dist.init_process_group(self.backend, init_method=f"file://{self.file_name}",
                                    rank=self.rank, world_size=self.world_size)
            t = torch.ones(2, device=self.device)
            dist.all_reduce(t)
            self.assertEqual(t, [2.0, 2.0])
"""

from __future__ import annotations

import functools
import os
import unittest
from typing import Any

from .._torch_private import test_method_name
from ..launched.launched_run import LaunchedTest
from ..launched.launched_world import LaunchedWorld
from ..launched.launcher_env import launched_rank
from ..many_worlds.unittest_worlds import compare_in_rank, run_test_across_worlds, sized_for_its_world, worlds_of
from ..skips.skip_checks import skip_or_check_settings
from ..testcase.ranks_testcase import RanksTestCase, dispatch_to_ranks
from ..testcase.tensor_testcase import current_seed
from ..worlds import settings
from ..worlds.outcomes import RankError, RankFailure
from ..worlds.rank_facts import STORE_FILE, current_rank_facts
from ..worlds.world import World
from .fresh_world import FreshWorld, verdict_with_leftovers, world_facts
from .leftovers import LeftoverProcessWarning
from .rank_process import run_between_hooks
from .upstream_entry import run_test_in_entry

__all__ = ["MultiProcessTestCase", "RankFailure", "RankError", "TIMEOUT_ENV",
           "LeftoverProcessWarning", "dispatch_to_ranks", "world_facts", "verdict_with_leftovers"]

__unittest = True

TIMEOUT_ENV = settings.TIMEOUT.name


class MultiProcessTestCase(RanksTestCase):
    """Run every test method on ``world_size`` ranks; passes only if every rank passed.

    Inside a rank: ``rank``, ``world_size`` (default 4; override as a class attribute or a
    property), ``file_name`` (a fresh per-test path for a ``FileStore``), ``device`` (``"cpu"``,
    or ``"<type>:<rank>"`` on an accelerator) and ``backend`` (that device's default backend).
    ``rank``, ``device``, ``device_type`` and ``backend`` are read-only properties over the
    rank's facts, so a subclass may define its own as a property or class attribute (the
    harness itself reads only the facts). In the test's own process ``rank`` is -1.

    Hooks a subclass may override (call ``super()``):

    - ``setUpRank()``: runs in each rank before the test method;
    - ``tearDownRank()``: runs in each rank after the test method, whatever its outcome.

    The per-test timeout is ``timeout`` seconds (default 300), or the
    ``TORCH_TESTING_EXT_TIMEOUT`` environment variable when set. Processes the ranks leave
    running are killed after the test and named in a ``LeftoverProcessWarning``
    (``TORCH_TESTING_EXT_LEFTOVER_PROCESSES=fail`` fails the test instead).

    Under a launcher (``RANK`` set) this process is a rank: each test runs here, between the
    same hooks, on ``world_size`` of the launcher's ranks (a test that needs more skips).
    """

    def __init__(self, methodName: str = "runTest") -> None:
        super().__init__(methodName)
        if current_rank_facts() is not None and methodName != "runTest" and self._worlds_spec(methodName):
            sized_for_its_world(self)  # its world_size is its world's

    # -- what a rank knows -------------------------------------------------------------------

    @property
    def backend(self) -> str:
        """The default process-group backend for this rank's device."""
        facts = current_rank_facts()
        if facts is None:
            raise AttributeError("only a rank has a backend; the test's own process starts the ranks")
        return facts.backend

    @property
    def file_name(self) -> str:
        """The test's ``FileStore`` path, the same on every rank and removed after the test."""
        facts = current_rank_facts()
        if facts is not None:
            return facts.file_name
        if self._test_dir is None:
            raise AttributeError("file_name: rank 0 did not announce the test's directory in time")
        return os.path.join(self._test_dir, STORE_FILE)

    @file_name.setter
    def file_name(self, value: str) -> None:
        # Upstream's rank entry (``_run``) sets ``self.file_name = file_name``, as given to it.
        if value != self.file_name:
            raise AttributeError(f"file_name is set by the harness: {self.file_name!r}, not {value!r}")

    def compare(self, name: str, value: Any, per_rank: bool = False) -> None:
        """In a test method decorated with ``across_worlds(...)``: record ``value`` as the next
        step of ``name`` (tensors, DTensors as their full tensor, numbers, and lists, tuples and
        dicts of them). Every rank of a world must record the same value and every world the
        reference world's; with ``per_rank=True``, rank r of each world that of rank r of the
        reference world."""
        __tracebackhide__ = True
        compare_in_rank(self, name, value, per_rank)

    # -- hooks -------------------------------------------------------------------------------

    def setUpRank(self) -> None:
        """Runs in each rank before the test method; override to prepare rank state."""

    def tearDownRank(self) -> None:
        """Runs in each rank after the test method, whatever its outcome."""

    # -- the test's own process --------------------------------------------------------------

    def setUp(self) -> None:
        super().setUp()
        self._launched_test: LaunchedTest | None = None
        self._fresh_world: FreshWorld | None = None
        launched = launched_rank()
        if launched is None:
            # The test's world, and its directory, from now on: file_name works in setUp and
            # tearDown too (upstream's is made in setUp); it goes after tearDown.
            self._fresh_world = FreshWorld(type(self).__name__)
            self.addCleanup(self._fresh_world.close)
            self._test_dir: str | None = self._fresh_world.test_dir
            return
        # Under a launcher the ranks agree on the test's directory now, so that file_name
        # works in setUp and tearDown too (upstream tearDowns remove it); it goes after them.
        self._launched_test = LaunchedTest(self, launched)
        self.addCleanup(self._launched_test.end)
        self._launched_test.begin(self._begin_timeout())
        self._test_dir = self._launched_test.test_dir

    def run_test(self, test_name: str, parent_pipe: Any) -> None:
        """Upstream's rank body, for subclasses that override the rank entry ``_run``: run
        ``test_name`` here, between the rank hooks (see ``_engine.fresh.upstream_entry``)."""
        run_test_in_entry(self, test_name, parent_pipe)

    def _worlds_spec(self, method: str) -> Any:
        """The ``across_worlds`` spec of ``method`` (None: it runs in one world)."""
        return worlds_of(getattr(type(self), method, None))

    def _run_on_ranks(self) -> None:
        """A method decorated with ``across_worlds`` runs in each of its worlds; any other as
        the template says."""
        spec = self._worlds_spec(test_method_name(self))
        if spec is None:
            super()._run_on_ranks()
            return
        if launched_rank() is not None:
            raise unittest.SkipTest("across_worlds runs the test in worlds of its own; under a launcher (torchrun) "
                                    "this process is one rank of one world: run it without the launcher")
        run_test_across_worlds(self, spec, skip_or_check_settings(self, self._checked_settings))

    def _spawn_processes(self) -> None:
        """Upstream-style hook for ``setUp``: ranks start when the test method runs, after
        parent-side skips are decided (so a skipped test starts no process); nothing to do here."""

    def _world(self) -> World:
        """Fresh ranks for this test; under a launcher, this process as its rank."""
        launched = launched_rank()
        if launched is None:
            assert self._fresh_world is not None, "setUp makes the test's world"
            return self._fresh_world
        body = functools.partial(run_between_hooks, self, test_method_name(self), current_seed())
        return LaunchedWorld(launched, body, getattr(self, "_launched_test", None))

    def _begin_timeout(self) -> float:
        """How long a launched rank waits for rank 0 to start a test: the test's timeout
        (checked with the other settings when the test method runs)."""
        try:
            return self._checked_settings().timeout
        except settings.SettingError:
            return settings.DEFAULT_TEST_TIMEOUT
