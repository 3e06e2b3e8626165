"""What ``compare`` takes from a rank (``many_worlds.values.to_payload``), in process: the
``AsyncCollectiveTensor`` a functional collective returns (a tensor parallel module's output)
is recorded as the plain tensor it stands for, unseen by the test's dispatch modes; another
tensor subclass is still refused, naming its type.
"""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch.utils._python_dispatch import TorchDispatchMode

from torch_testing_ext._engine.many_worlds.values import to_payload
from torch_testing_ext.common_utils import TestCase


class Seen(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


class TestToPayload(TestCase):
    def test_a_functional_collectives_result_is_its_plain_tensor(self):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            waiting = funcol.all_reduce(torch.arange(3, dtype=torch.float64), "sum", dist.group.WORLD)
            self.assertIs(type(waiting), funcol.AsyncCollectiveTensor)
            with Seen() as seen:
                payload = to_payload({"out": waiting})
            self.assertEqual(seen.ops, [])
            self.assertIs(type(payload["out"]), torch.Tensor)
            self.assertEqual(payload["out"].tolist(), [0.0, 1.0, 2.0])
        finally:
            dist.destroy_process_group()

    def test_another_tensor_subclass_is_refused(self):
        class Mine(torch.Tensor):
            pass

        with self.assertRaisesRegex(TypeError, r"value\['x'\] is of type Mine, a tensor subclass"):
            to_payload({"x": torch.ones(1).as_subclass(Mine)})
