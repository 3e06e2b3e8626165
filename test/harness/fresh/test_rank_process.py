"""Self-tests of the rank release: a rank that has finished its test keeps its process
groups until every rank has finished, and then tears down and exits by itself.

Without it a fast rank could close its sockets while a peer was still completing gloo's
pairwise full-mesh connection, and that peer failed with "Connection closed by peer".
"""

import unittest
from unittest import mock

from torch_testing_ext._engine.fresh import supervisor
from torch_testing_ext.common_utils import TestCase

from fixtures import inprocess_cases


class TestRankRelease(TestCase):
    def test_released_ranks_exit_by_themselves(self):
        # A rank that is never released would be killed after EXIT_GRACE (exit code -9).
        exit_codes = []
        original_finish = supervisor._FreshRanks.finish

        def finish(ranks):
            outcomes = original_finish(ranks)
            exit_codes.extend(ranks.processes[rank].exitcode for rank in sorted(ranks.processes))
            return outcomes

        result = unittest.TestResult()
        with mock.patch.object(supervisor._FreshRanks, "finish", finish):
            inprocess_cases.RanksWaitForEachOther("test_finished_rank_outlives_a_slower_peer").run(result)
        self.assertEqual(result.errors + result.failures, [])
        self.assertEqual(exit_codes, [0, 0])

    def test_ddp_module_may_outlive_its_destroyed_group(self):
        # Without retire_process_groups both ranks deadlock and time out.
        result = unittest.TestResult()
        inprocess_cases.DdpOutlivesItsGroup("test_ddp_freed_after_its_group").run(result)
        self.assertEqual(result.errors + result.failures, [])
