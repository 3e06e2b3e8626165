"""The one interface behind every way of running ranks: a :class:`World`.

A world is the ranks one test runs on. The test cases (``MultiProcessTestCase``,
``MultiProcContinuousTest``, ``MultiThreadedTestCase``) share one template
(``torch_testing_ext._engine.testcase.ranks_testcase``) that decides skips, checks the settings into a
:class:`RunSettings`, asks the class for its world once per test and raises the verdict the
world returns. The four worlds:

=================  ==========================================  =============================
world              ranks                                       lives for
=================  ==========================================  =============================
fresh ranks        processes forked for the test               one test
kept ranks         processes forked once, sent test after test the class (closed after a
                                                               test that did not pass alike)
thread ranks       threads of the test's process               one test
launched ranks     this process and its peers, started by a    the launcher's job
                   launcher (``torchrun``)
=================  ==========================================  =============================

Each world owns the directory its ranks meet in (rendezvous file, rank logs, ledgers): a
:class:`WorldDir`, made when the world is made and removed when it closes. Torch-free.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
import unittest
from typing import Protocol

from .outcomes import RankFailure, Verdict

__all__ = ["RunSettings", "World", "WorldDir"]


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """One test's checked settings: seconds for all its ranks, their number, what to do
    with processes they leave running (``"warn"`` or ``"fail"``), and whether the process
    ranks are forked from should load inductor's compiler first (classes that compile)."""

    timeout: float
    world_size: int
    leftover_policy: str = "warn"
    warm_inductor: bool = False


class World(Protocol):
    """The ranks tests run on. ``run`` starts the ranks it needs, runs the test's method on
    every rank and returns the combined verdict (what the ranks left running included);
    ``close`` ends whatever the world keeps between tests and describes what its ranks left
    running (empty when nothing). ``failure`` is the exception a failed verdict raises."""

    @property
    def failure(self) -> type[RankFailure]:
        """The exception a failed verdict raises (``RankFailure`` or a subclass)."""
        ...

    def run(self, test: unittest.TestCase, settings: RunSettings) -> Verdict:
        """Run ``test``'s current method on ``settings.world_size`` ranks; their verdict."""
        ...

    def close(self) -> str:
        """End the ranks the world keeps; what they left running, described (or "")."""
        ...


class WorldDir:
    """A world's directory, where its ranks meet (rendezvous file, rank logs, ledgers): made
    under ``parent`` with a prefix from ``name`` (``MyTest-k3j_x``), removed with everything
    in it by :meth:`remove`. The worlds make and remove their directories only through this."""

    def __init__(self, parent: str, name: str) -> None:
        prefix = re.sub(r"[^\w.-]", "_", name)
        self.path = tempfile.mkdtemp(prefix=f"{prefix}-", dir=parent)

    def remove(self) -> None:
        """Remove the directory and everything in it (nothing if it is gone already)."""
        shutil.rmtree(self.path, ignore_errors=True)
