"""Self-tests of the fork server's preload: a rank starts with the heavy imports done.

DDP, ``replicate`` and FSDP import ``torch._dynamo`` when they are built, and
``assert_close`` (behind ``TestCase.assertEqual``) imports ``torch.distributed.tensor``. Each
costs seconds; a rank must find them already imported by the server it was forked from. This
module imports neither itself, so only the server's preload can have imported them. The
server also imports the test file itself (whether it runs as ``python FILE``, under pytest or
the driver), and for classes that ask, inductor's compiler.
"""

import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import unittest
from unittest import mock

import torch

from torch_testing_ext._engine._torch_private import forkserver_process
from torch_testing_ext._engine.fresh import fork_server
from torch_testing_ext._engine.fresh.rank_process import share_cpus
from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import TestCase

from fixtures import warm_up_probe, world_cases
from fixtures.process_checks import wait_until
from fixtures.runs import assert_outcomes, run_case

IMPORTED_BY = os.getpid()  # the process that ran this module's body


class TestForkServerPreload(MultiProcessTestCase):
    world_size = 2

    def test_rank_starts_with_lazy_torch_modules_imported(self):
        for name in ("torch._dynamo", "torch.distributed.tensor"):
            self.assertTrue(name in sys.modules, f"rank {self.rank} would import {name} itself")

    def test_rank_finds_its_test_file_imported_by_the_server(self):
        # The rank's parent is the fork server; had it not imported this file, the rank would
        # have run the module's body itself (a second or more for a large test file).
        self.assertEqual(IMPORTED_BY, os.getppid(), f"rank {self.rank} imported its test file itself")

    @unittest.skipIf("OMP_NUM_THREADS" in os.environ, "OMP_NUM_THREADS is set: ranks keep torch's own choice")
    def test_rank_takes_its_share_of_the_cpus(self):
        self.assertEqual(torch.get_num_threads(), max(1, len(os.sched_getaffinity(0)) // self.world_size))


class TestInductorLoadedInServer(MultiProcessTestCase):
    world_size = 2
    warm_inductor_in_server = True

    def test_rank_starts_with_inductor_loaded(self):
        self.assertIn("torch._inductor.compile_fx", sys.modules)
        self.assertNotEqual(IMPORTED_BY, os.getpid(), "the rank imported its test file itself")


class TestServerSurvives(TestCase):
    """Whatever else the test process does to our fork server, the next test gets one."""

    def run_two_ranks(self):
        assert_outcomes(self, run_case(world_cases.OnFreshRanks, "test_facts"), passed=1)

    def server(self):
        self.run_two_ranks()  # a server runs
        pid, fd = forkserver_process(fork_server._server)
        self.assertTrue(fork_server.server_alive())
        return pid, fd

    def test_reaped_by_someone_elses_wait(self):
        pid, _fd = self.server()
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)  # another library's os.wait() reaps our child
        self.assertFalse(fork_server.server_alive())
        self.run_two_ranks()
        self.assertNotEqual(fork_server.server_pid(), pid)

    def test_killed(self):
        pid, _fd = self.server()
        os.kill(pid, signal.SIGKILL)
        self.assertTrue(wait_until(lambda: not fork_server.server_alive(), 10))
        self.run_two_ranks()
        self.assertNotEqual(fork_server.server_pid(), pid)

    def test_its_pipe_closed_and_the_number_reused(self):
        pid, fd = self.server()
        os.close(fd)  # someone closes descriptors it does not own...
        other = os.open(os.devnull, os.O_RDONLY)
        os.dup2(other, fd)  # ...and the number comes back for another file
        try:
            self.assertFalse(fork_server.server_alive())
            self.run_two_ranks()
            os.fstat(fd)  # still open: stopping the old server did not close it
        finally:
            os.close(fd)
            os.close(other)
        self.assertNotEqual(fork_server.server_pid(), pid)

    def test_stopped_twice_and_when_never_started(self):
        self.server()
        fork_server.stop_server()
        fork_server.stop_server()
        self.assertIsNone(fork_server.server_pid())
        self.run_two_ranks()

    def test_another_library_using_multiprocessings_own_forkserver(self):
        pid, _fd = self.server()
        shared = multiprocessing.get_context("forkserver")
        multiprocessing.set_forkserver_preload([])
        process = shared.Process(target=int)
        process.start()
        process.join(60)
        self.assertEqual(process.exitcode, 0)
        shared_pid = multiprocessing.forkserver._forkserver._forkserver_pid
        self.assertNotEqual(shared_pid, pid)  # its server is not ours...
        multiprocessing.forkserver._forkserver._stop()  # ...and stopping it leaves ours alone
        self.assertEqual(fork_server.server_pid(), pid)
        self.run_two_ranks()
        self.assertEqual(fork_server.server_pid(), pid)


class TestWarmUp(TestCase):
    def test_the_warm_up_call_is_made_in_the_server_and_every_fork_finds_it_made(self):
        warm_up = fork_server.WarmUp(warm_up_probe.__name__, "record", ("a", "b"))
        context = fork_server.forkserver_context(warm_up_probe.__name__, warm_up=warm_up)
        self.addCleanup(fork_server.stop_server)  # the next test starts a server without it
        self.assertEqual(warm_up_probe.CALLS, [], "made in the test process")
        for _ in range(2):
            parent, child = context.Pipe()
            process = context.Process(target=warm_up_probe.report, args=(child,))
            process.start()
            child.close()
            self.assertEqual(parent.recv(), [("a", "b")])
            process.join(60)
            self.assertEqual(process.exitcode, 0)


class TestShareCpus(TestCase):
    def setUp(self):
        self.addCleanup(torch.set_num_threads, torch.get_num_threads())

    def test_a_rank_gets_the_cpus_divided_by_the_world_size(self):
        with mock.patch.dict(os.environ), mock.patch.object(os, "sched_getaffinity", return_value=set(range(8))):
            os.environ.pop("OMP_NUM_THREADS", None)
            share_cpus(4)
            self.assertEqual(torch.get_num_threads(), 2)
            share_cpus(16)  # never fewer than one
            self.assertEqual(torch.get_num_threads(), 1)

    def test_omp_num_threads_wins(self):
        torch.set_num_threads(3)
        with mock.patch.dict(os.environ, {"OMP_NUM_THREADS": "3"}):
            share_cpus(64)
        self.assertEqual(torch.get_num_threads(), 3)
