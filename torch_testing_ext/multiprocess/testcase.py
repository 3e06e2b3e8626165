"""``MultiProcessTestCase``: each test method runs on ``world_size`` fresh rank processes.

In the test process (the *parent*, ``self.rank == -1``) a test method is replaced by a driver
that decides parent-side skips, forks the ranks from the preloaded server, supervises them
and turns their outcomes into one result. Inside a rank the class is instantiated again and
only the test method runs (not ``setUp``/``tearDown``, as upstream), after the rank hooks
``_rank_set_up``/``_rank_tear_down`` and with every RNG seeded alike.

Upstream-style subclasses that call ``self._spawn_processes()`` in ``setUp`` keep working;
subclasses that don't are spawned all the same.

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
import shutil
import types
import unittest

from .. import devices
from ..skips import pending_skip
from ..testcase import TestCase, current_seed
from . import server, supervisor
from .context import RankContext, current_rank_context
from .outcome import Status, combine

__all__ = ["MultiProcessTestCase", "TIMEOUT_ENV", "DEFAULT_TIMEOUT"]

TIMEOUT_ENV = "TORCH_TESTING_EXT_TIMEOUT"
DEFAULT_TIMEOUT = 300.0


class RankFailure(AssertionError):
    """One or more ranks failed an assertion."""


class RankError(RuntimeError):
    """One or more ranks raised, crashed or timed out."""


class MultiProcessTestCase(TestCase):
    """Run every test method on ``world_size`` ranks; passes only if every rank passed.

    Attributes in a rank: ``rank``, ``world_size`` (default 4; override as a class attribute
    or a property), ``file_name`` (a fresh per-test path for a ``FileStore``), ``device``
    (``"cpu"``, or ``"<type>:<rank>"`` on an accelerator) and ``backend`` (that device's
    default backend). The per-test timeout is ``timeout`` seconds (default 300), or the
    ``TORCH_TESTING_EXT_TIMEOUT`` environment variable when set.
    """

    world_size: int = 4
    timeout: float = DEFAULT_TIMEOUT
    rank: int = -1

    def __init__(self, methodName: str = "runTest") -> None:
        super().__init__(methodName)
        if current_rank_context() is None and methodName != "runTest":
            original = getattr(type(self), methodName)

            @functools.wraps(original)
            def run_on_ranks(test: MultiProcessTestCase) -> None:
                test._run_on_ranks()

            # A bound method, so that unittest's loader treats it like the method it replaces.
            setattr(self, methodName, types.MethodType(run_on_ranks, self))

    # -- parent side -------------------------------------------------------------------------

    def setUp(self) -> None:
        super().setUp()
        self._test_dir = supervisor.new_test_dir(server.run_directory(), type(self).__name__)
        self.file_name = os.path.join(self._test_dir, "store")

    def tearDown(self) -> None:
        super().tearDown()
        shutil.rmtree(self._test_dir, ignore_errors=True)

    def _spawn_processes(self) -> None:
        """Upstream-style hook for ``setUp``: ranks start when the test method runs, after
        parent-side skips are decided (so a skipped test starts no process); nothing to do here."""

    def _effective_timeout(self) -> float:
        from_env = os.environ.get(TIMEOUT_ENV)
        return float(from_env) if from_env else float(self.timeout)

    def _rank_contexts(self) -> list[RankContext]:
        size = int(self.world_size)
        return [RankContext(rank, size, devices.rank_device(rank),
                            devices.default_backend(devices.rank_device(rank)), self.file_name,
                            self._test_dir) for rank in range(size)]

    def _run_on_ranks(self) -> None:
        reason = pending_skip(self)
        if reason:
            raise unittest.SkipTest(reason)
        if int(self.world_size) < 1:
            raise RankError(f"world_size must be at least 1, got {self.world_size!r}")
        cls = type(self)
        launch = supervisor.TestLaunch(
            cls.__module__, cls.__qualname__, self._testMethodName, self._rank_contexts(),
            seed=current_seed(), timeout=self._effective_timeout(),
        )
        outcomes = supervisor.run_ranks(launch, server.rank_context(cls.__module__))
        verdict = combine(outcomes)
        if verdict.status is Status.SKIPPED:
            raise unittest.SkipTest(verdict.message)
        if verdict.status is Status.FAILED:
            raise RankFailure(verdict.message)
        if verdict.status is Status.ERROR:
            raise RankError(verdict.message)

    # -- rank side ---------------------------------------------------------------------------

    def _apply_rank_context(self, context: RankContext) -> None:
        self.rank = context.rank
        self.file_name = context.file_name
        self.device = context.device
        self.backend = context.backend
        self._test_dir = context.test_dir
        if not isinstance(getattr(type(self), "world_size", None), property):
            self.world_size = context.world_size

    def _rank_set_up(self) -> None:
        """Runs in each rank before the test method; override to prepare rank state."""

    def _rank_tear_down(self) -> None:
        """Runs in each rank after the test method, whatever its outcome."""
