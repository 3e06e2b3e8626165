"""Self-tests of the fork server's preload: a rank starts with the heavy lazy imports done.

DDP, ``replicate`` and FSDP import ``torch._dynamo`` when they are built, and
``assert_close`` (behind ``TestCase.assertEqual``) imports ``torch.distributed.tensor``. Each
costs seconds; a rank must find them already imported by the server it was forked from. This
module imports neither itself, so only the server's preload can have imported them.
"""

import sys

from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import run_tests


class TestForkServerPreload(MultiProcessTestCase):
    world_size = 2

    def test_rank_starts_with_lazy_torch_modules_imported(self):
        for name in ("torch._dynamo", "torch.distributed.tensor"):
            self.assertTrue(name in sys.modules, f"rank {self.rank} would import {name} itself")


if __name__ == "__main__":
    run_tests()
