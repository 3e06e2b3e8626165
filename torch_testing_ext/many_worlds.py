"""Many worlds, one answer: the same test at several world sizes, compared step by step (ours,
not an upstream path).

pytest::

    @pytest.mark.worlds(1, 2, 4)                 # world sizes; the first is the reference
    def test_ddp_matches_one_rank(rank, world_size, device, compare):
        ...
        compare("loss", loss)                    # step 0, 1, ... of "loss"

unittest (a ``MultiProcessTestCase`` method)::

    @across_worlds(1, 2, 4)
    def test_ddp_matches_one_rank(self):
        ...
        self.compare("loss", loss)

The test runs once in a world of each size; it passes only if every world passed and every
compared value agrees, within each world (every rank records the same value, unless
``per_rank=True``) and with the reference world. Otherwise :class:`WorldsDisagree` names the
first divergence in execution order (name, step, world, both values, the line of the call) and
shows that name's differences per step and world. Compared values travel through files, never
through the test's process groups. Arguments the harness cannot use are a
:class:`WorldsSpecError` of that test alone (one line).
"""

from ._engine.many_worlds.unittest_worlds import across_worlds
from ._engine.many_worlds.worlds_spec import WorldsSpecError
from ._engine.worlds.outcomes import WorldsDisagree

__all__ = ["across_worlds", "WorldsDisagree", "WorldsSpecError"]
