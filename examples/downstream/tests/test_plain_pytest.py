"""Plain pytest functions beside the TestCase files: the driver runs this file under pytest."""

import pytest

from minidist import chunk_sizes


@pytest.mark.parametrize("total,parts", [(0, 1), (7, 3), (100, 8)])
def test_chunks_add_up(total, parts):
    sizes = chunk_sizes(total, parts)
    assert sum(sizes) == total
    assert max(sizes) - min(sizes) <= 1
