"""What RPC test bodies call besides ``dist_init`` (torch_testing_ext._engine.distributed_bases.rpc_aids),
checked on a one-worker RPC world in this process, and with RPC's answers faked where a failure
or a timeout is the point."""

import os
import tempfile
import unittest
from types import SimpleNamespace
from unittest import mock

import torch.distributed as dist
from torch.distributed import rpc

from torch_testing_ext import dist_utils
from torch_testing_ext._engine.distributed_bases import rpc_aids


class TestWithoutRpc(unittest.TestCase):
    def test_names_and_the_init_method_template(self):
        self.assertEqual(dist_utils.worker_name(3), "worker3")
        self.assertEqual(dist_utils.INIT_METHOD_TEMPLATE.format(file_name="/tmp/f"), "file:///tmp/f")
        self.assertIsNone(dist_utils.noop())

    def test_get_function_event_is_the_first_whose_name_contains_the_part(self):
        events = [SimpleNamespace(name="aten::add"), SimpleNamespace(name="rpc_sync#foo"),
                  SimpleNamespace(name="rpc_sync#foo(2)")]
        self.assertIs(dist_utils.get_function_event(events, "rpc_sync#foo"), events[1])
        with self.assertRaises(IndexError):
            dist_utils.get_function_event(events, "missing")

    def test_wait_until_node_failure_returns_the_first_matching_error(self):
        answers = iter([None, RuntimeError("some other trouble"), RuntimeError("worker1 is gone: EOF")])

        def rpc_sync(to, fn, args):
            self.assertEqual((to, fn, args), ("worker1", rpc_aids.noop, ()))
            answer = next(answers)
            if answer is not None:
                raise answer

        with mock.patch.object(rpc, "rpc_sync", rpc_sync), mock.patch.object(rpc_aids.time, "sleep"):
            self.assertEqual(dist_utils.wait_until_node_failure(1, "gone"), "worker1 is gone: EOF")

    def test_pending_futures_and_users_that_never_flush_time_out_naming_them(self):
        pending = {"num_pending_futures": "2", "num_pending_users": "1"}
        with mock.patch.object(rpc_aids, "rref_context_debug_info", return_value=pending), \
                self.assertRaisesRegex(ValueError, r"after 0.2 s .* 2 futures and 1 users pending"):
            dist_utils.wait_until_pending_futures_and_users_flushed(timeout=0.2)


class TestOnOneWorker(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="selftest-rpc-")
        options = rpc.TensorPipeRpcBackendOptions(
            init_method=dist_utils.INIT_METHOD_TEMPLATE.format(file_name=os.path.join(cls.folder, "init")))
        # The registry's enum: another test of this process may have registered a backend since
        # rpc's namespace took its BackendType.
        rpc.init_rpc(dist_utils.worker_name(0), backend=rpc.backend_registry.BackendType.TENSORPIPE, rank=0,
                     world_size=1, rpc_backend_options=options)

    @classmethod
    def tearDownClass(cls):
        rpc.shutdown()
        for name in os.listdir(cls.folder):
            os.remove(os.path.join(cls.folder, name))
        os.rmdir(cls.folder)

    def test_owners_and_forks_are_read_and_waited_for(self):
        owners, forks = dist_utils.get_num_owners_and_forks()  # strings, as RPC's debug info has them
        self.assertEqual((owners, forks), ("0", "0"))
        dist_utils.wait_until_owners_and_forks_on_rank(0, 0, 0, timeout=5)  # asks rank 0 by RPC
        with self.assertRaisesRegex(ValueError, r"waiting for 2 owners and 1 forks on rank 0: it had 0 and 0"):
            dist_utils.wait_until_owners_and_forks_on_rank(2, 1, 0, timeout=0.5)

    def test_a_quiet_context_is_flushed_at_once(self):
        dist_utils.wait_until_pending_futures_and_users_flushed(timeout=5)

    def test_initialize_pg_starts_the_default_group_once(self):
        init = dist_utils.INIT_METHOD_TEMPLATE.format(file_name=os.path.join(self.folder, "pg"))
        dist_utils.initialize_pg(init, 0, 1)
        try:
            group = dist.group.WORLD
            self.assertEqual((dist.get_backend(), dist.get_world_size()), ("gloo", 1))
            dist_utils.initialize_pg(init, 0, 1)  # already up: nothing new
            self.assertIs(dist.group.WORLD, group)
        finally:
            dist.destroy_process_group()
