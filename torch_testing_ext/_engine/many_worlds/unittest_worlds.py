"""``across_worlds`` for ``MultiProcessTestCase`` methods: one unittest test, several worlds.

::

    class TestDDP(MultiProcessTestCase):
        @across_worlds(1, 2, 4)
        def test_matches_one_rank(self):
            dist.init_process_group(self.backend, init_method=f"file://{self.file_name}",
                                    rank=self.rank, world_size=self.world_size)
            ...
            self.compare("loss", loss)

The decorator records the checked :class:`WorldsSpec` on the method (or why its arguments
cannot be used: that test alone errors, with one line). In the test's own process
:func:`run_test_across_worlds` runs the method on fresh ranks in each world, one after another;
inside a rank, the test's ``world_size`` is its world's (:func:`sized_for_its_world`), whatever
the class says, and ``self.compare`` records (:func:`compare_in_rank`). The class's ``timeout``
holds for each world unless the decorator gives one.
"""

from __future__ import annotations

import os
import unittest
from collections.abc import Callable
from typing import Any, TypeVar

from ... import devices
from .._torch_private import test_method_name
from ..fresh import fork_server
from ..fresh.fresh_world import FreshWorld, verdict_with_leftovers, world_facts
from ..reporting.status import Status
from ..testcase.tensor_testcase import current_seed
from ..worlds import settings
from ..worlds.outcomes import Verdict
from ..worlds.rank_facts import RankFacts, RankTask, current_rank_facts
from ..worlds.world import RunSettings
from .across import WorldEnd, raise_worlds_verdict, run_across_worlds
from .value_records import RECORDS_DIR_ENV, Recorder, records_directory, records_file
from .worlds_spec import WorldsSpec, WorldsSpecError, parse_worlds

__all__ = ["across_worlds", "worlds_of", "sized_for_its_world", "compare_in_rank", "run_test_across_worlds"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])
_SPEC_ATTR = "__tte_across_worlds__"


def across_worlds(*sizes: int, rtol: float | None = None, atol: float | None = None, timeout: float | None = None,
                  allow_cpu: bool = False) -> Callable[[_F], _F]:
    """Run a ``MultiProcessTestCase`` method once in a world of each of ``sizes`` (the first is
    the reference) and compare what its ranks record with ``self.compare(name, value)``: one
    test, which passes only if every world passed and every compared value agrees (within
    ``rtol``/``atol``; neither: ``torch.testing.assert_close``'s defaults for the dtype).
    ``timeout``: seconds for each world (else the class's); ``allow_cpu``: CPU ranks where
    there are fewer accelerators than a world's ranks (else that world skips)."""
    try:
        spec: WorldsSpec | str = parse_worlds(sizes, {"rtol": rtol, "atol": atol, "timeout": timeout,
                                                      "allow_cpu": allow_cpu}, name="across_worlds")
    except WorldsSpecError as error:
        spec = str(error)

    def decorate(method: _F) -> _F:
        if not callable(method) or isinstance(method, type):
            raise TypeError(f"across_worlds(...) decorates a test method, not {method!r}")
        setattr(method, _SPEC_ATTR, spec)
        return method

    return decorate


def worlds_of(method: Any) -> WorldsSpec | None:
    """The spec ``across_worlds`` gave ``method`` (through any decorators that keep
    ``__wrapped__``), None if it has none; ``WorldsSpecError`` if its arguments were bad."""
    while method is not None:
        spec = getattr(method, _SPEC_ATTR, None)
        if isinstance(spec, str):
            raise WorldsSpecError(spec)
        if spec is not None:
            return spec
        method = getattr(method, "__wrapped__", None)
    return None


_SIZED: dict[type, type] = {}  # each class's copy whose world_size is its world's


def _sized(cls: type) -> type:
    if cls in _SIZED:
        return _SIZED[cls]

    def world_size(self: Any) -> int:
        facts = current_rank_facts()
        assert facts is not None, "a test across worlds is sized in its ranks"
        return facts.world_size

    sized = type(cls.__name__, (cls,), {"world_size": property(world_size), "__module__": cls.__module__,
                                        "__qualname__": cls.__qualname__})
    return _SIZED.setdefault(cls, sized)


def sized_for_its_world(test: unittest.TestCase) -> None:
    """In a rank of a test across worlds: make ``test.world_size`` its world's size (the
    class's own, attribute or property, says the size of its other tests)."""
    test.__class__ = _sized(type(test))


def compare_in_rank(test: Any, name: str, value: Any, per_rank: bool) -> None:
    """``self.compare(name, value, per_rank)`` in a rank: record it (``value_records``)."""
    __tracebackhide__ = True
    recorder = test.__dict__.get("_tte_recorder")
    if recorder is None:
        facts = current_rank_facts()
        if facts is None:
            raise RuntimeError("self.compare() records in the test's ranks; this is the test's own process")
        recorder = Recorder(records_file(records_directory("self.compare()"), facts.rank))
        test.__dict__["_tte_recorder"] = recorder
    recorder.record(name, value, per_rank, depth=3)


def _world_facts(spec: WorldsSpec, size: int, test_dir: str) -> list[RankFacts] | str:
    """The ranks of a world of ``size``; a skip reason when there are too few accelerators."""
    accelerator = devices.accelerator_type()
    if accelerator is None or devices.device_count() >= size:
        return world_facts(size, test_dir)
    if not spec.allow_cpu:
        return (f"needs {size} {accelerator.upper()} devices, this machine has {devices.device_count()} "
                "(across_worlds(..., allow_cpu=True) runs on CPU ranks instead)")
    return [RankFacts(rank, size, "cpu", "gloo", test_dir) for rank in range(size)]


def run_test_across_worlds(test: unittest.TestCase, spec: WorldsSpec, checked: RunSettings) -> None:
    """Run ``test``'s method on fresh ranks in each world of ``spec`` and end it as their one
    verdict says (``SkipTest``, ``WorldsDisagree``, ``RankFailure``, ``RankError``)."""
    cls = type(test)
    method = test_method_name(test)
    timeout = settings.timeout_seconds("across_worlds(timeout=...)", spec.timeout or checked.timeout)

    def run_world(size: int, records_dir: str) -> WorldEnd:
        with FreshWorld(f"{cls.__name__}-{size}") as world:
            facts = _world_facts(spec, size, world.test_dir)
            if isinstance(facts, str):
                return Verdict(Status.SKIPPED, facts), None
            task = RankTask(cls.__module__, cls.__qualname__, method, current_seed(),
                            dict(os.environ, **{RECORDS_DIR_ENV: records_dir}))
            context = fork_server.forkserver_context(cls.__module__, checked.warm_inductor)
            ended = world.run_task(task, facts, timeout, context)
            return verdict_with_leftovers(ended, checked.leftover_policy, f"{test.id()} (world {size})"), None

    raise_worlds_verdict(run_across_worlds(spec, run_world, fork_server.run_directory(), method))
