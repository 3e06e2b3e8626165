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

from typing import Any

from ... import devices
from ..testcase.ranks_testcase import RanksTestCase
from ..worlds.world import World
from .thread_world import ThreadWorld

__all__ = ["MultiThreadedTestCase"]

__unittest = True



class MultiThreadedTestCase(RanksTestCase):
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

    def _world(self) -> World:
        return ThreadWorld()
