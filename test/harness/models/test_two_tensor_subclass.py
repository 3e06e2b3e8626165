"""Self-tests of ``two_tensor.TwoTensor``: ops on both tensors, aliasing, refusals, compiling."""

import torch

from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.two_tensor import TwoTensor


class TestTwoTensor(TestCase):
    def test_ops_run_on_both(self):
        t = TwoTensor(torch.ones(2), torch.zeros(2))
        # (operation, expected a, expected b)
        rows = [(lambda x: x + 1, [2.0, 2.0], [1.0, 1.0]), (lambda x: x * 3, [3.0, 3.0], [0.0, 0.0]),
                (lambda x: x.view(2, 1).sum(0), [2.0], [0.0])]
        for op, a, b in rows:
            out = op(t)
            self.assertIsInstance(out, TwoTensor)
            self.assertEqual((out.a, out.b), (torch.tensor(a), torch.tensor(b)))

    def test_views_and_in_place_alias(self):
        t = TwoTensor(torch.ones(2), torch.zeros(2))
        view = t.view(2, 1)
        self.assertIs(view._base, t)
        self.assertIs(t.add_(1), t)
        self.assertEqual((t.a, t.b), (torch.tensor([2.0, 2.0]), torch.tensor([1.0, 1.0])))

    def test_mismatched_inner_tensors_are_refused(self):
        for b in (torch.zeros(3), torch.zeros(2, dtype=torch.float64), torch.zeros(4)[::2]):
            with self.subTest(b=b.shape), self.assertRaises(ValueError):
                TwoTensor(torch.ones(2), b)

    def test_compiles(self):
        compiled = torch.compile(lambda z: z * 2 + 1, backend="aot_eager")
        out = compiled(TwoTensor(torch.zeros(2), torch.ones(2)))
        self.assertIsInstance(out, TwoTensor)
        self.assertEqual((out.a, out.b), (torch.ones(2), torch.full((2,), 3.0)))
