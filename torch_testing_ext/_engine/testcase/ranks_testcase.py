"""The template of every test case whose methods run on ranks.

``RanksTestCase`` owns what the ways of running ranks have in common: in the test's own
process (or thread) each test method is replaced by a dispatcher; the dispatcher decides the
skips a decorator knows before any rank starts, checks the class's ``timeout`` and
``world_size`` (a bad one is a one-line ``SettingError``), asks the class for its world
(:meth:`RanksTestCase._world`, see ``torch_testing_ext._engine.worlds.world``) and raises the verdict
the world returns. Inside a rank (a process or a thread that entered its rank facts) the
class's own method runs, and ``rank``, ``device`` and ``device_type`` read the rank's facts.

A subclass chooses its world and may adjust the settings (``_world_size``,
``_timeout_value``, ``_checked_settings``).
"""

from __future__ import annotations

import functools
import types
import unittest

from ... import devices
from ..skips.skip_checks import skip_or_check_settings
from ..worlds import settings
from ..worlds.outcomes import raise_verdict
from ..worlds.rank_facts import RankFacts, current_rank_facts
from ..worlds.world import RunSettings, World
from .tensor_testcase import TestCase

__all__ = ["RanksTestCase", "dispatch_to_ranks"]

__unittest = True


def _rank_facts() -> RankFacts:
    facts = current_rank_facts()
    if facts is None:
        raise AttributeError("only a rank has this attribute; the test's own process (or thread) "
                             "starts the ranks")
    return facts


class RanksTestCase(TestCase):
    """A test case whose every test method runs on ``world_size`` ranks, and passes only if
    every rank passed (see the module docstring); a subclass says where the ranks run."""

    world_size: int = settings.DEFAULT_WORLD_SIZE
    timeout: float = settings.DEFAULT_TEST_TIMEOUT
    #: Load inductor's compiler (and its per-process caches) once in the process that rank
    #: processes are forked from, instead of in every rank: for classes whose tests compile.
    warm_inductor_in_server: bool = False

    def __init__(self, methodName: str = "runTest") -> None:
        super().__init__(methodName)
        dispatch_to_ranks(self, methodName)

    # -- what a rank knows -------------------------------------------------------------------

    @property
    def rank(self) -> int:
        """This rank's number; -1 in the test's own process (or thread)."""
        facts = current_rank_facts()
        return -1 if facts is None else facts.rank

    @rank.setter
    def rank(self, value: int) -> None:
        # Upstream's rank entry (``_run``) sets ``self.rank = rank``; the harness decides it.
        if value != self.rank:
            raise AttributeError(f"rank is set by the harness: this is rank {self.rank}, not {value!r}")

    @property
    def device(self) -> str:
        """This rank's device: ``"cpu"``, or ``"<type>:<index>"`` on an accelerator."""
        return _rank_facts().device

    @property
    def device_type(self) -> str:
        """The type of this rank's device (``"cpu"``, ``"cuda"``...); in the test's own
        process, the type its ranks will use."""
        facts = current_rank_facts()
        return devices.device_type() if facts is None else facts.device.split(":")[0]

    # -- the test's own process --------------------------------------------------------------

    def _world_size(self) -> int:
        """The number of ranks before it is checked (a subclass may compute a default)."""
        return self.world_size

    def _timeout_value(self) -> object:
        """The class's timeout before it is checked (a subclass may convert it)."""
        return self.timeout

    def _checked_settings(self) -> RunSettings:
        """The test's settings, or ``SettingError`` naming the bad one. Runs only for a test
        that no decorator skips; a subclass may skip from here (too few devices)."""
        name = type(self).__name__
        return RunSettings(settings.timeout_seconds(f"{name}.timeout", self._timeout_value()),
                           settings.positive_integer(f"{name}.world_size", self._world_size()),
                           settings.LEFTOVER_PROCESSES.get(), bool(self.warm_inductor_in_server))

    def _world(self) -> World:
        """The world this test runs on (a subclass's choice)."""
        raise NotImplementedError(f"{type(self).__qualname__} does not say where its ranks run")

    def _run_on_ranks(self) -> None:
        """Skips, settings, the world's run, the verdict: the whole test, seen from here."""
        checked = skip_or_check_settings(self, self._checked_settings)
        world = self._world()
        raise_verdict(world.run(self, checked), world.failure)


def dispatch_to_ranks(test: unittest.TestCase, method_name: str) -> None:
    """In the test's own process (or thread), make ``test``'s method ``method_name`` call
    ``test._run_on_ranks()``; in a rank, leave the class's method in place."""
    if current_rank_facts() is not None or method_name == "runTest":
        return
    original = getattr(type(test), method_name)

    @functools.wraps(original)
    def run_on_ranks(self: RanksTestCase) -> None:
        self._run_on_ranks()

    # A bound method, so that unittest's loader treats it like the method it replaces.
    setattr(test, method_name, types.MethodType(run_on_ranks, test))
