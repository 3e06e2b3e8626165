"""Self-tests of the rank release: a rank that has finished its test keeps its process
groups until every rank has finished, and then tears down and exits by itself.

Without it a fast rank could close its sockets while a peer was still completing gloo's
pairwise full-mesh connection, and that peer failed with "Connection closed by peer".
"""

import os
import time
import unittest
from unittest import mock

import torch.distributed as dist

from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.multiprocess import supervisor


def _alive(pid):
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class RanksWaitForEachOther(MultiProcessTestCase):
    world_size = 2

    def test_finished_rank_outlives_a_slower_peer(self):
        dist.init_process_group("gloo", init_method=f"file://{self.file_name}", rank=self.rank,
                                world_size=self.world_size)
        pid_file = os.path.join(self._test_dir, "rank0.pid")
        if self.rank == 0:
            with open(pid_file + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(pid_file + ".tmp", pid_file)
            return  # rank 0 is done at once
        deadline = time.monotonic() + 60
        while not os.path.exists(pid_file):
            self.assertLess(time.monotonic(), deadline, "rank 0 never finished")
            time.sleep(0.05)
        with open(pid_file) as f:
            pid = int(f.read())
        time.sleep(1.0)
        self.assertTrue(_alive(pid), "rank 0 exited while rank 1 was still running its test")
        self.assertTrue(dist.is_initialized())


class TestRankRelease(TestCase):
    def test_released_ranks_exit_by_themselves(self):
        # A rank that is never released would be killed after EXIT_GRACE (exit code -9).
        exit_codes = []
        original_finish = supervisor._Ranks.finish

        def finish(ranks):
            outcomes = original_finish(ranks)
            exit_codes.extend(ranks.processes[rank].exitcode for rank in sorted(ranks.processes))
            return outcomes

        result = unittest.TestResult()
        with mock.patch.object(supervisor._Ranks, "finish", finish):
            RanksWaitForEachOther("test_finished_rank_outlives_a_slower_peer").run(result)
        self.assertEqual(result.errors + result.failures, [])
        self.assertEqual(exit_codes, [0, 0])


if __name__ == "__main__":
    run_tests()
