"""A plain single-process test: TestCase's tensor-aware assertEqual."""

import torch

from minidist import chunk_sizes
from torch_testing_ext.common_utils import TestCase, run_tests


class TestChunkSizes(TestCase):
    def test_larger_chunks_first(self):
        self.assertEqual(chunk_sizes(10, 4), [3, 3, 2, 2])

    def test_chunks_match_torch_tensor_split(self):
        for total in range(9):
            sizes = [len(part) for part in torch.arange(total).tensor_split(3)]
            self.assertEqual(chunk_sizes(total, 3), sizes)

    def test_bad_parts(self):
        with self.assertRaisesRegex(ValueError, "at least 1"):
            chunk_sizes(4, 0)


if __name__ == "__main__":
    run_tests()
