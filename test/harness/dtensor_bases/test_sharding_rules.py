"""Self-tests of ``validate_sharding_rule_sample`` (forward and backward) and
``op_strategy_context``: right rules pass, wrong ones fail, on two CPU ranks."""

import torch
from torch.distributed.tensor import Replicate, Shard, distribute_tensor

from torch_testing_ext.distributed._tensor.common_dtensor import (
    DTensorOpTestBase,
    op_strategy_context,
    validate_sharding_rule_sample,
    validate_sharding_rule_sample_backward,
)

aten = torch.ops.aten


class StrategyCalled(Exception):
    pass


def refusing_strategy(op_schema):
    raise StrategyCalled(str(op_schema.op))


# An op of this test's own, which DTensor has no rule for (torch's ops gain and lose rules
# between releases).
@torch.library.custom_op("tte_sharding_rules::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


class TestShardingRules(DTensorOpTestBase):
    world_size = 2

    def test_forward_rules(self):
        mesh = self.build_device_mesh()
        torch.manual_seed(0)
        x, y, w = torch.randn(4, 6), torch.randn(4, 6), torch.randn(6, 3)
        self.assertTrue(validate_sharding_rule_sample(aten.add.Tensor, (x, y), {}, [Shard(0), Shard(0)],
                                                      [Shard(0)], mesh))
        self.assertTrue(validate_sharding_rule_sample(aten.mm.default, (x, w), {}, [Shard(0), Replicate()],
                                                      [Shard(0)], mesh))
        # Wrong claims: the output sharded on the other dimension; local sums read as the total.
        self.assertFalse(validate_sharding_rule_sample(aten.mm.default, (x, w), {}, [Shard(0), Replicate()],
                                                       [Shard(1)], mesh))
        self.assertFalse(validate_sharding_rule_sample(aten.sum.default, (x,), {}, [Shard(0)], [Replicate()],
                                                       mesh))

    def test_backward_rules(self):
        mesh = self.build_device_mesh()
        torch.manual_seed(0)
        x, w = torch.randn(4, 6), torch.randn(6, 3)
        self.assertIs(validate_sharding_rule_sample_backward(torch.mm, (x, w), {}, [Shard(0), Replicate()], mesh),
                      True)
        ints = torch.arange(8).reshape(4, 2)
        self.assertIsNone(validate_sharding_rule_sample_backward(torch.add, (ints, ints), {},
                                                                 [Shard(0), Shard(0)], mesh))
        with self.assertRaisesRegex(AssertionError, "1 placements for 2 tensor arguments"):
            validate_sharding_rule_sample_backward(torch.mm, (x, w), {}, [Shard(0)], mesh)

    def test_op_strategy_context_swaps_the_rule_for_the_block_only(self):
        mesh = self.build_device_mesh()
        dt = distribute_tensor(torch.ones(4, 2), mesh, [Shard(0)])
        op = torch.ops.tte_sharding_rules.twice.default
        no_rule = "tte_sharding_rules.twice.default"
        with self.assertRaisesRegex(Exception, no_rule):
            torch.ops.tte_sharding_rules.twice(dt)
        with op_strategy_context(op, refusing_strategy):
            with self.assertRaisesRegex(RuntimeError, "Sharding propagation failed") as raised:
                torch.ops.tte_sharding_rules.twice(dt)
            self.assertIsInstance(raised.exception.__cause__, StrategyCalled)
        with self.assertRaises(Exception) as after:  # no rule again, as before the block
            torch.ops.tte_sharding_rules.twice(dt)
        self.assertNotIsInstance(after.exception.__cause__, StrategyCalled)
        self.assertIn(no_rule, str(after.exception))
