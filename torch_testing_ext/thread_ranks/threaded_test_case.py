"""``MultiThreadedTestCase``: each test method runs on ``world_size`` rank threads of this process.

In the test's own thread (``self.rank == -1``) a test method is replaced by a driver that
checks the settings, decides skips, and runs the method on the rank threads (see
``rank_threads``); each rank thread makes its own instance of the class, joins the default
``threaded`` group as its rank, and runs ``perThreadSetUp()``, the method and
``perThreadTearDown()``. ``setUp``/``tearDown`` run in the test's own thread, as upstream.

Example::

    class TestAllReduce(MultiThreadedTestCase):
        world_size = 4

        def test_sum(self):
            t = torch.full((2,), float(self.rank))
            dist.all_reduce(t)
            self.assertEqual(t, [6.0, 6.0])

Rank threads share one process: one RNG (``assertEqualOnRank`` checks on one rank only), one
default dtype, one set of module globals.
"""

from __future__ import annotations

import functools
import types
from typing import Any

from .. import devices
from .._torch_private import test_method_name
from ..testcase.tensor_testcase import TestCase
from ..ranks import settings
from ..ranks.skip_checks import skip_or_check_settings
from .rank_threads import current_thread_rank, raise_for_outcome, run_rank_threads

__all__ = ["MultiThreadedTestCase", "DEFAULT_WORLD_SIZE", "DEFAULT_THREADED_TIMEOUT"]

__unittest = True

DEFAULT_WORLD_SIZE = 4
DEFAULT_THREADED_TIMEOUT = 300.0  # seconds for one test on all its rank threads


class MultiThreadedTestCase(TestCase):
    """Run every test method on ``world_size`` rank threads; passes only if every rank passed.

    In a rank thread: ``rank``, ``world_size`` (default 4; a class attribute or a property),
    ``device`` (``"cpu"``, or ``"<type>:<rank>"`` on an accelerator) and ``device_type``;
    ``torch.distributed`` acts as that rank in its default ``threaded`` group.
    ``rank`` and ``device`` are read-only properties; ``device_type`` may be overridden.

    Hooks (call ``super()``): ``perThreadSetUp()`` and ``perThreadTearDown()`` run in each rank
    thread around the test method, while the rank's group exists.

    The per-test timeout is ``timeout`` seconds (default 300), or ``TORCH_TESTING_EXT_TIMEOUT``.
    """

    MAIN_THREAD_RANK = -1
    world_size: int = DEFAULT_WORLD_SIZE
    timeout: float = DEFAULT_THREADED_TIMEOUT

    def __init__(self, methodName: str = "runTest") -> None:
        super().__init__(methodName)
        self._thread_rank = current_thread_rank()
        if self._thread_rank is None and methodName != "runTest":

            @functools.wraps(getattr(type(self), methodName))
            def run_on_threads(test: MultiThreadedTestCase) -> None:
                test._run_on_threads()

            # A bound method, so that unittest's loader treats it like the method it replaces.
            setattr(self, methodName, types.MethodType(run_on_threads, self))

    # -- what a rank thread knows --------------------------------------------------------------

    @property
    def rank(self) -> int:
        """This rank thread's rank; -1 in the test's own thread."""
        return self.MAIN_THREAD_RANK if self._thread_rank is None else self._thread_rank

    @property
    def device(self) -> str:
        """This rank's device: ``"cpu"``, or ``"<type>:<rank>"`` on an accelerator."""
        if self._thread_rank is None:
            raise AttributeError("only a rank thread has a device; the test's own thread starts "
                                 "the rank threads")
        return devices.rank_device(self._thread_rank)

    @property
    def device_type(self) -> str:
        """The type of the ranks' devices (``"cpu"``, ``"cuda"``...)."""
        return devices.device_type()

    # -- hooks ---------------------------------------------------------------------------------

    def perThreadSetUp(self) -> None:
        """Runs in each rank thread before the test method, after its group was created."""

    def perThreadTearDown(self) -> None:
        """Runs in each rank thread after the test method, whatever its outcome."""

    def _spawn_threads(self) -> None:
        """Upstream-style hook for ``setUp``: rank threads start when the test method runs,
        after skips are decided; nothing to do here."""

    def assertEqualOnRank(self, x: Any, y: Any, msg: str | None = None, *, rank: int = 0) -> None:
        """``assertEqual`` on rank ``rank`` only (the ranks share one RNG, so random values
        agree between ranks only by accident)."""
        if self.rank == rank:
            self.assertEqual(x, y, msg)

    def assertNotEqualOnRank(self, x: Any, y: Any, msg: str | None = None, *, rank: int = 0) -> None:
        """``assertNotEqual`` on rank ``rank`` only."""
        if self.rank == rank:
            self.assertNotEqual(x, y, msg)

    # -- the test's own thread -----------------------------------------------------------------

    def _checked_settings(self) -> tuple[float, int]:
        """The timeout and world size, or SettingError naming the bad one."""
        name = type(self).__name__
        return (settings.timeout_seconds(f"{name}.timeout", self.timeout),
                settings.positive_integer(f"{name}.world_size", self.world_size))

    def _run_on_threads(self) -> None:
        timeout, world_size = skip_or_check_settings(self, self._checked_settings)
        cls, method = type(self), test_method_name(self)

        def body(rank: int) -> None:
            test = cls(method)  # in a rank thread: the plain method, and this rank's instance
            test.perThreadSetUp()
            try:
                getattr(test, method)()
            finally:
                test.perThreadTearDown()

        raise_for_outcome(run_rank_threads(body, world_size, timeout, self.id()))
