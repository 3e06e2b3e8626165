"""Subgroups a test makes on a kept world belong to that test.

DTensor and FSDP tests make device meshes, and a mesh of more than one dimension makes
subgroups. On fresh ranks they go with the ranks; on kept ranks the bases that expect them
(``DTensorContinuousTestBase``, ``FSDPTestContinuous``) destroy every group a test made after
it, and empty DTensor's caches (whose results name the test's meshes and so its destroyed
groups), so that they are neither a leak nor inherited by the next test. The class's default
group stays. (Any kept rank destroys the groups of meshes no longer alive: ``mesh_groups``.)
"""

from __future__ import annotations

from typing import Any

from .._torch_private import clear_dtensor_caches, live_process_groups
from ..process_groups.teardown import destroy_groups_made_since

__all__ = ["GroupsPerTest"]

__unittest = True


class GroupsPerTest:
    """Mixin for a kept-rank test class: groups made during a test are destroyed after it
    (and DTensor's caches emptied)."""

    _groups_before_test: list[Any]

    def setUpRank(self) -> None:
        super().setUpRank()  # type: ignore[misc]  # a mixin: the rank test case after it has the hook
        self._groups_before_test = live_process_groups()

    def tearDownRank(self) -> None:
        try:
            destroy_groups_made_since(self._groups_before_test)
            clear_dtensor_caches()
        finally:
            super().tearDownRank()  # type: ignore[misc]  # a mixin: the rank test case after it has the hook
