"""``MultiProcessTestCase``: each test method runs on ``world_size`` fresh rank processes.

In the test's own process (``self.rank == -1``) a test method is replaced by a driver that
decides parent-side skips, forks the ranks from the preloaded server, supervises them and
turns their outcomes into one result. Inside a rank the class is instantiated again and only
the test method runs, between the hooks ``setUpRank()`` and ``tearDownRank()`` and with every
RNG seeded alike; ``setUp``/``tearDown`` run in the test's own process, as upstream.

Upstream-style subclasses that call ``self._spawn_processes()`` in ``setUp`` keep working;
subclasses that don't are spawned all the same.

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
import shutil
import types
import unittest
import warnings

from .. import devices
from .._torch_private import test_method_name
from ..testcase.tensor_testcase import TestCase, current_seed
from ..launcher.launched_run import LaunchedTest
from ..ranks.launcher_env import LaunchedRank, launched_rank, too_few_ranks_reason
from ..reporting.status import Status
from ..ranks import settings
from ..ranks.skip_checks import skip_or_check_settings
from . import fork_server, supervisor
from .leftovers import LeftoverProcessWarning, describe_leftovers
from ..ranks.outcomes import RankError, RankFailure, Verdict, combine, raise_verdict
from .rank_process import run_between_hooks
from ..ranks.rank_facts import STORE_FILE, RankFacts, RankTask, current_rank_facts
from .supervisor import RanksEnded

__all__ = ["MultiProcessTestCase", "RankFailure", "RankError", "TIMEOUT_ENV", "DEFAULT_TEST_TIMEOUT",
           "LeftoverProcessWarning", "dispatch_to_ranks", "launched_settings", "world_facts",
           "verdict_with_leftovers"]

__unittest = True

TIMEOUT_ENV = settings.TIMEOUT.name
DEFAULT_TEST_TIMEOUT = 300.0  # seconds for one test on all its ranks


def _in_rank() -> RankFacts:
    facts = current_rank_facts()
    if facts is None:
        raise AttributeError("only a rank process has this attribute; the test's own process "
                             "starts the ranks")
    return facts


class MultiProcessTestCase(TestCase):
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

    world_size: int = 4
    timeout: float = DEFAULT_TEST_TIMEOUT

    def __init__(self, methodName: str = "runTest") -> None:
        super().__init__(methodName)
        dispatch_to_ranks(self, methodName)

    # -- what a rank knows -------------------------------------------------------------------

    @property
    def rank(self) -> int:
        """This rank's number; -1 in the test's own process."""
        facts = current_rank_facts()
        return -1 if facts is None else facts.rank

    @property
    def device(self) -> str:
        """This rank's device: ``"cpu"``, or ``"<type>:<rank>"`` on an accelerator."""
        return _in_rank().device

    @property
    def device_type(self) -> str:
        """The type of this rank's device (``"cpu"``, ``"cuda"``...); in the test's own process,
        the type its ranks will use."""
        facts = current_rank_facts()
        return devices.device_type() if facts is None else facts.device.split(":")[0]

    @property
    def backend(self) -> str:
        """The default process-group backend for this rank's device."""
        return _in_rank().backend

    @property
    def file_name(self) -> str:
        """The test's ``FileStore`` path, the same on every rank and removed after the test."""
        facts = current_rank_facts()
        if facts is not None:
            return facts.file_name
        if self._test_dir is None:
            raise AttributeError("file_name: rank 0 did not announce the test's directory in time")
        return os.path.join(self._test_dir, STORE_FILE)

    # -- hooks -------------------------------------------------------------------------------

    def setUpRank(self) -> None:
        """Runs in each rank before the test method; override to prepare rank state."""

    def tearDownRank(self) -> None:
        """Runs in each rank after the test method, whatever its outcome."""

    # -- the test's own process --------------------------------------------------------------

    def setUp(self) -> None:
        super().setUp()
        self._launched_test: LaunchedTest | None = None
        launched = launched_rank()
        if launched is None:
            self._test_dir: str | None = supervisor.new_test_dir(fork_server.run_directory(),
                                                                  type(self).__name__)
            return
        # Under a launcher the ranks agree on the test's directory now, so that file_name
        # works in setUp and tearDown too (upstream tearDowns remove it); it goes after them.
        self._launched_test = LaunchedTest(self, launched)
        self.addCleanup(self._launched_test.end)
        self._launched_test.begin(self._begin_timeout())
        self._test_dir = self._launched_test.test_dir

    def tearDown(self) -> None:
        super().tearDown()
        if self._launched_test is None:
            shutil.rmtree(self._test_dir, ignore_errors=True)

    def _spawn_processes(self) -> None:
        """Upstream-style hook for ``setUp``: ranks start when the test method runs, after
        parent-side skips are decided (so a skipped test starts no process); nothing to do here."""

    def _checked_settings(self) -> tuple[float, int, str]:
        """The timeout, world size and leftover policy, or SettingError naming the bad one."""
        name = type(self).__name__
        return (settings.timeout_seconds(f"{name}.timeout", self.timeout),
                settings.positive_integer(f"{name}.world_size", self.world_size),
                settings.LEFTOVER_PROCESSES.get())

    def _world(self, world_size: int) -> list[RankFacts]:
        return world_facts(world_size, self._test_dir)

    def _run_on_ranks(self) -> None:
        launched = launched_rank()
        if launched is not None:
            self._run_as_launched_rank(launched)
            return
        timeout, world_size, leftover_policy = skip_or_check_settings(self, self._checked_settings)
        cls = type(self)
        task = RankTask(cls.__module__, cls.__qualname__, test_method_name(self), current_seed(),
                        dict(os.environ))
        ended = supervisor.run_ranks(task, self._world(world_size), timeout,
                                     fork_server.forkserver_context(cls.__module__))
        raise_verdict(verdict_with_leftovers(ended, leftover_policy, self.id()))

    # -- under a launcher: this process is a rank --------------------------------------------

    def _begin_timeout(self) -> float:
        """How long a rank waits for rank 0 to start a test: the test's timeout (checked with
        the other settings when the test method runs)."""
        try:
            return self._checked_settings()[0]
        except settings.SettingError:
            return DEFAULT_TEST_TIMEOUT

    def _run_as_launched_rank(self, launched: LaunchedRank) -> None:
        timeout, world_size = launched_settings(self, launched)
        body = functools.partial(run_between_hooks, self, test_method_name(self), current_seed())
        run = getattr(self, "_launched_test", None)
        if run is None:  # setUp did not run (a subclass's setUp without super())
            run = LaunchedTest(self, launched)
            self.addCleanup(run.end)
            run.begin(timeout)
        raise_verdict(run.run(body, timeout, world_size))


def launched_settings(test: TestCase, launched: LaunchedRank) -> tuple[float, int]:
    """The timeout and world size of ``test`` run as a launched rank: ``SkipTest`` if a skip
    decorator says so, or if the test needs more ranks than the launcher started."""
    timeout, world_size, _ = skip_or_check_settings(test, test._checked_settings)  # type: ignore[attr-defined]
    reason = too_few_ranks_reason(type(test).__name__, world_size, launched)
    if reason:
        raise unittest.SkipTest(reason)
    return timeout, world_size


def world_facts(world_size: int, test_dir: str) -> list[RankFacts]:
    """The facts of ``world_size`` ranks on this machine's devices, meeting in ``test_dir``."""
    return [RankFacts(rank, world_size, devices.rank_device(rank),
                      devices.default_backend(devices.rank_device(rank)), test_dir)
            for rank in range(world_size)]


def dispatch_to_ranks(test: TestCase, method_name: str) -> None:
    """In the test's own process, make ``test``'s method ``method_name`` call
    ``test._run_on_ranks()`` (which runs the class's method on the ranks); in a rank, leave it."""
    if current_rank_facts() is not None or method_name == "runTest":
        return
    original = getattr(type(test), method_name)

    @functools.wraps(original)
    def run_on_ranks(self: TestCase) -> None:
        self._run_on_ranks()  # type: ignore[attr-defined]

    # A bound method, so that unittest's loader treats it like the method it replaces.
    setattr(test, method_name, types.MethodType(run_on_ranks, test))


def verdict_with_leftovers(ended: RanksEnded, leftover_policy: str, test_id: str) -> Verdict:
    """The test's verdict from its ranks' outcomes; processes they left running fail the
    test under the ``fail`` policy, and are warned about otherwise."""
    verdict = combine(ended.outcomes)
    if not ended.leftovers:
        return verdict
    note = describe_leftovers(ended.leftovers)
    if leftover_policy == "fail":
        status = Status.ERROR if verdict.status in (Status.PASSED, Status.SKIPPED) else verdict.status
        return Verdict(status, "\n".join(filter(None, [verdict.message, note])),
                       verdict.headline or note.splitlines()[0])
    warnings.warn(LeftoverProcessWarning(f"{test_id}: {note}"), stacklevel=3)
    return verdict
