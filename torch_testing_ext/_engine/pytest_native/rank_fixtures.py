"""The fixtures of a test marked ``@pytest.mark.world_size`` (or ``worlds``): ``rank``,
``world_size``, ``device``, ``backend`` and ``process_group``; and ``compare``, for a test
marked ``@pytest.mark.worlds``.

They read the facts of the rank the test runs as (``torch_testing_ext._engine.worlds.rank_facts``):
in a rank process (fresh or kept ranks) they are set up there, with the test's other
fixtures. ``process_group`` is the default group: on fresh ranks made for the test on the
test's rendezvous file (no fixed port) and destroyed after it; on kept ranks made once when
the world starts and kept for its tests. On thread ranks the test's fixtures are set up once,
in the test's thread, and each rank thread gets its own values of these five (see
``pytest_worlds.run_on_rank_threads``). ``compare(name, value, per_rank=False)`` records a
value that must agree across the test's worlds (``many_worlds.value_records``). Imports no torch
until a fixture is set up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ..many_worlds.worlds_spec import WORLDS_MARK_NAME
from ..worlds.rank_facts import RankFacts, current_rank_facts
from .item_state import ThreadRankValue, runs_on_threads

__all__ = ["rank", "world_size", "device", "backend", "process_group", "compare",
           "KEPT_GROUP"]

KEPT_GROUP = pytest.StashKey[Any]()  # the default group a kept world made, in its rank session


def _facts(request: pytest.FixtureRequest, name: str) -> RankFacts | ThreadRankValue:
    facts = current_rank_facts()
    if facts is not None:
        return facts
    if runs_on_threads(request.node):
        return ThreadRankValue(name)
    pytest.fail(f"the {name!r} fixture is for tests marked @pytest.mark.world_size(n) or "
                f"@pytest.mark.worlds(n, m, ...); {request.node.nodeid} is not", pytrace=False)


@pytest.fixture
def rank(request: pytest.FixtureRequest) -> int | ThreadRankValue:
    """This rank's number, 0 to ``world_size - 1``."""
    facts = _facts(request, "rank")
    return facts if isinstance(facts, ThreadRankValue) else facts.rank


@pytest.fixture
def world_size(request: pytest.FixtureRequest) -> int | ThreadRankValue:
    """The number of ranks the test runs on (the size of this test's id with several)."""
    facts = _facts(request, "world_size")
    return facts if isinstance(facts, ThreadRankValue) else facts.world_size


@pytest.fixture
def device(request: pytest.FixtureRequest) -> str | ThreadRankValue:
    """This rank's device: ``"cpu"``, or ``"<type>:<index>"`` on an accelerator (made the
    current device)."""
    facts = _facts(request, "device")
    if isinstance(facts, ThreadRankValue):
        return facts
    if ":" in facts.device:
        import torch

        torch.accelerator.set_device_index(int(facts.device.rsplit(":", 1)[1]))
    return facts.device


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str | ThreadRankValue:
    """The process-group backend of this rank's device (gloo on CPU, nccl on CUDA...)."""
    facts = _facts(request, "backend")
    return facts if isinstance(facts, ThreadRankValue) else facts.backend


@pytest.fixture
def process_group(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The default process group of this test's ranks (``torch.distributed.group.WORLD``)."""
    facts = _facts(request, "process_group")
    if isinstance(facts, ThreadRankValue):
        yield facts
        return
    kept = request.config.stash.get(KEPT_GROUP, None)
    if kept is not None:  # a kept world's group, made when the world started
        yield kept
        return
    import torch.distributed as dist

    from ..process_groups.rendezvous import rendezvous_init_method
    from ..process_groups.teardown import destroy_process_groups

    if facts.backend != "gloo" and ":" in facts.device:
        import torch

        torch.accelerator.set_device_index(int(facts.device.rsplit(":", 1)[1]))
    dist.init_process_group(facts.backend, init_method=rendezvous_init_method(), rank=facts.rank,
                            world_size=facts.world_size)
    try:
        yield dist.group.WORLD
    finally:
        destroy_process_groups()


@pytest.fixture
def compare(request: pytest.FixtureRequest) -> Any:
    """``compare(name, value, per_rank=False)``: record ``value`` as the next step of ``name``;
    every rank of a world must record the same value, and every world the reference world's
    (see ``@pytest.mark.worlds``)."""
    if request.node.get_closest_marker(WORLDS_MARK_NAME) is None:
        pytest.fail(f"the 'compare' fixture is for tests marked @pytest.mark.worlds(n, m, ...); "
                    f"{request.node.nodeid} is not", pytrace=False)
    facts = _facts(request, "compare")
    if isinstance(facts, ThreadRankValue):
        return facts
    from ..many_worlds.value_records import Recorder, records_directory, records_file

    return Recorder(records_file(records_directory("the compare fixture"), facts.rank))
