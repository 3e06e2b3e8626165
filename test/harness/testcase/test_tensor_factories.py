"""The tensor factories of torch_testing_ext._engine.testcase.tensor_factories, by the
properties they promise."""

import math

import torch

from torch_testing_ext.common_utils import (
    TestCase,
    is_iterable_of_tensors,
    make_fullrank_matrices_with_distinct_singular_values,
    noncontiguous_like,
    random_hermitian_pd_matrix,
    random_symmetric_pd_matrix,
    random_well_conditioned_matrix,
)


class TestTensorFactories(TestCase):
    def test_noncontiguous_like(self):
        for t in (torch.arange(6.0).view(2, 3).requires_grad_(), torch.tensor([True, False]),
                  torch.arange(4), torch.tensor([1 + 2j, 3j])):
            made = noncontiguous_like(t)
            self.assertFalse(made.is_contiguous())
            self.assertEqual(made, t)
            self.assertEqual(made.requires_grad, t.requires_grad)
        strided = torch.arange(6.0)[::2]
        self.assertIs(noncontiguous_like(strided), strided)
        # The values between are NaN (floating), True (bool) or 12 (other types).
        self.assertTrue(math.isnan(noncontiguous_like(torch.ones(2)).as_strided((1,), (1,), 0).item()))
        self.assertEqual(noncontiguous_like(torch.zeros(2, dtype=torch.int64)).as_strided((1,), (1,), 0).item(), 12)

    def test_is_iterable_of_tensors(self):
        self.assertTrue(is_iterable_of_tensors([torch.ones(1), torch.zeros(2)]))
        self.assertFalse(is_iterable_of_tensors(torch.ones(3)))
        self.assertFalse(is_iterable_of_tensors([torch.ones(1), 1]))
        self.assertFalse(is_iterable_of_tensors(5))
        self.assertFalse(is_iterable_of_tensors([]))
        self.assertTrue(is_iterable_of_tensors((), include_empty=True))

    def test_positive_definite_matrices(self):
        sym = random_symmetric_pd_matrix(3, 2, dtype=torch.float64)
        self.assertEqual(sym.shape, (2, 3, 3))
        self.assertEqual(sym, sym.mT)
        self.assertTrue(bool((torch.linalg.eigvalsh(sym) > 0).all()))
        herm = random_hermitian_pd_matrix(4, dtype=torch.complex128, device="cpu")
        self.assertEqual(herm, herm.mH)
        self.assertTrue(bool((torch.linalg.eigvalsh(herm) >= 1 - 1e-9).all()))

    def test_well_conditioned_and_full_rank(self):
        m = random_well_conditioned_matrix(2, 5, 3, dtype=torch.float64, device="cpu", sigma=0.001)
        self.assertEqual(m.shape, (2, 5, 3))
        values = torch.linalg.svdvals(m)
        self.assertTrue(bool(((values - 1).abs() < 0.01).all()))
        f = make_fullrank_matrices_with_distinct_singular_values(4, 3, device="cpu", dtype=torch.float64,
                                                                 requires_grad=True)
        self.assertTrue(f.requires_grad)
        values = torch.linalg.svdvals(f.detach())
        self.assertEqual(sorted(values.tolist(), reverse=True), values.tolist())
        self.assertEqual(values, torch.tensor([1.5, 1.25, 2 / 3], dtype=torch.float64))
