"""Contract tests for every private torch/CPython access (``torch_testing_ext._engine._torch_private``).

Each test exercises one access the way the harness uses it. When a release changes one, the
failure names the access and the torch and Python versions, so the fix is obvious. A last
test checks that no other module of the package reaches for a private name.
"""

import ast
import contextlib
import inspect
import multiprocessing
import multiprocessing.forkserver
import os
import pathlib
import re
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from unittest import mock

import torch
import torch.distributed as dist

import torch_testing_ext
from torch_testing_ext._engine import _torch_private as private
from torch_testing_ext.common_utils import TestCase

from fixtures import distributed_ranks

PACKAGE = pathlib.Path(torch_testing_ext.__file__).parent


def in_child_interpreter(code, timeout=120):
    """Run ``code`` in a fresh interpreter; the completed process (text output)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout)


@contextlib.contextmanager
def contract(name):
    """Turn any failure inside the block into one that names the access and the versions."""
    try:
        yield
    except Exception as error:
        raise AssertionError(
            f"private access changed: {private.ACCESSES[name]!r}; now on torch {torch.__version__}, "
            f"Python {sys.version.split()[0]}: {type(error).__name__}: {error}"
        ) from error


def _parent_of(pid):
    with open(f"/proc/{pid}/stat") as stat_file:
        return int(stat_file.read().rsplit(")", 1)[1].split()[1])


def _stop(server):
    """Stop a fork server the test started (the stdlib's way: close its pipe, wait)."""
    pid, fd = private.forkserver_process(server)
    os.close(fd)
    os.waitpid(pid, 0)
    private.forget_forkserver(server)


class TestPrivateAccessContracts(TestCase):
    def test_every_access_has_a_contract_test(self):
        tested = {name.removeprefix("test_") for name in dir(self) if name.startswith("test_")}
        self.assertEqual(sorted(set(private.ACCESSES) - tested), [])

    def test_built_with_lapack(self):
        with contract("built_with_lapack"):
            self.assertIsInstance(private.built_with_lapack(), bool)
            if private.built_with_lapack():  # then CPU linear algebra works
                self.assertEqual(torch.linalg.inv(torch.eye(2, dtype=torch.float64)), torch.eye(2, dtype=torch.float64))
            self.assertIn("LAPACK", torch.__config__.show() if private.built_with_lapack() else "LAPACK")

    def test_built_with_spectral(self):
        with contract("built_with_spectral"):
            self.assertIsInstance(private.built_with_spectral(), bool)
            if private.built_with_spectral():
                self.assertEqual(torch.fft.fft(torch.ones(4)).real, [4.0, 0.0, 0.0, 0.0])

    def test_dsl_available(self):
        with contract("dsl_available"):
            for name in ("triton", "cutedsl"):
                self.assertIsInstance(private.dsl_available(name), bool)
            self.assertIs(private.dsl_available("no-such-dsl"), False)
            from torch._native.dsl_registry import dsl_registry

            self.assertIsInstance(list(dsl_registry.list_all_dsls()), list)

    def test_forkserver_context_of(self):
        with contract("forkserver_context_of"):
            server = multiprocessing.forkserver.ForkServer()
            shared = multiprocessing.forkserver._forkserver
            shared_pid = shared._forkserver_pid
            context = private.forkserver_context_of(server)
            process = context.Process(target=time.sleep, args=(30,))
            process.start()
            try:
                pid = private.forkserver_process(server)[0]
                self.assertIsInstance(pid, int)
                self.assertEqual(_parent_of(process.pid), pid)  # forked from our server...
                self.assertIs(shared._forkserver_pid, shared_pid)  # ...not from the shared one
                process.kill()
                process.join(60)
                self.assertEqual(process.exitcode, -signal.SIGKILL)
            finally:
                _stop(server)

    def test_forkserver_process(self):
        with contract("forkserver_process"):
            server = multiprocessing.forkserver.ForkServer()
            self.assertEqual(private.forkserver_process(server), (None, None))
            server.ensure_running()
            try:
                pid, fd = private.forkserver_process(server)
                self.assertEqual(_parent_of(pid), os.getpid())
                self.assertTrue(stat.S_ISFIFO(os.fstat(fd).st_mode))
            finally:
                _stop(server)

    def test_forget_forkserver(self):
        with contract("forget_forkserver"):
            server = multiprocessing.forkserver.ForkServer()
            server.ensure_running()
            pid, fd = private.forkserver_process(server)
            address = server._forkserver_address
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)  # reaped here: the server's own ensure_running() would now raise
            os.close(fd)
            private.forget_forkserver(server)
            self.assertEqual(private.forkserver_process(server), (None, None))
            self.assertFalse(os.path.exists(address))
            server.ensure_running()  # starts afresh
            try:
                self.assertNotEqual(private.forkserver_process(server)[0], pid)
            finally:
                _stop(server)

    def test_stop_resource_tracker(self):
        with contract("stop_resource_tracker"):
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
            pid = resource_tracker._resource_tracker._pid
            self.assertTrue(os.path.exists(f"/proc/{pid}"))
            private.stop_resource_tracker()
            self.assertFalse(os.path.exists(f"/proc/{pid}"))  # stopped and reaped
            private.stop_resource_tracker()  # stopping twice is harmless
            resource_tracker.ensure_running()
            pid = resource_tracker._resource_tracker._pid
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)  # reaped by someone else's wait
            private.stop_resource_tracker()
            resource_tracker.ensure_running()  # a new one starts
            self.assertNotEqual(resource_tracker._resource_tracker._pid, pid)
            private.stop_resource_tracker()

    def test_run_multiprocessing_finalizers(self):
        with contract("run_multiprocessing_finalizers"):
            import multiprocessing.util

            ran = []
            multiprocessing.util.Finalize(None, ran.append, args=("exit",), exitpriority=0)
            private.run_multiprocessing_finalizers()
            self.assertEqual(ran, ["exit"])

    def test_call_after_multiprocessing_exit(self):
        with contract("call_after_multiprocessing_exit"):
            # In a child interpreter: the callback runs at exit, after the semaphore a Lock
            # created was unlinked and unregistered (else the tracker would warn of a leak).
            code = ("import multiprocessing as mp\n"
                    "from torch_testing_ext._engine import _torch_private as p\n"
                    "lock = mp.get_context('spawn').Lock()\n"
                    "name = lock._semlock.name\n"
                    "def after():\n"
                    "    import _multiprocessing\n"
                    "    try:\n"
                    "        _multiprocessing.sem_unlink(name)\n"
                    "        print('still linked')\n"
                    "    except FileNotFoundError:\n"
                    "        print('unlinked before the callback')\n"
                    "p.call_after_multiprocessing_exit(after)\n")
            completed = in_child_interpreter(code, timeout=60)
            self.assertEqual(completed.stdout.strip(), "unlinked before the callback",
                             completed.stderr)
            self.assertNotIn("leaked", completed.stderr)

    def test_multiprocessing_tempdir(self):
        with contract("multiprocessing_tempdir"):
            import multiprocessing.util

            config = multiprocessing.current_process()._config
            saved = config.pop("tempdir", None)
            try:
                with private.multiprocessing_tempdir("/tmp/x"):
                    self.assertEqual(multiprocessing.util.get_temp_dir(), "/tmp/x")
                self.assertNotIn("tempdir", config)
                config["tempdir"] = "/tmp/y"
                with private.multiprocessing_tempdir("/tmp/x"):
                    self.assertEqual(multiprocessing.util.get_temp_dir(), "/tmp/x")
                self.assertEqual(config["tempdir"], "/tmp/y")
            finally:
                config.pop("tempdir", None)
                if saved is not None:
                    config["tempdir"] = saved

    def test_main_script_path(self):
        with contract("main_script_path"):
            # A child interpreter running a script: the script's absolute path.
            with tempfile.TemporaryDirectory() as scratch:
                script = pathlib.Path(scratch, "probe.py")
                script.write_text("from torch_testing_ext._engine import _torch_private as p\n"
                                  "print(p.main_script_path())\n")
                completed = subprocess.run([sys.executable, script.name], cwd=scratch,
                                           capture_output=True, text=True, timeout=60)
                self.assertEqual(completed.stdout.strip(), str(script), completed.stderr)
            # No script: ``-c`` has none to import.
            completed = in_child_interpreter("from torch_testing_ext._engine import _torch_private as p\n"
                                             "print(p.main_script_path())\n", timeout=60)
            self.assertEqual(completed.stdout.strip(), "None", completed.stderr)

    def test_import_main_script(self):
        with contract("import_main_script"):
            # In a child interpreter (it replaces ``__main__``): the script's body runs as
            # ``__mp_main__``, its main block does not, and ``__main__`` is that module.
            with tempfile.TemporaryDirectory() as scratch:
                script = pathlib.Path(scratch, "script.py")
                script.write_text("VALUE = 41 + 1\n"
                                  "if __name__ == '__main__':\n"
                                  "    raise SystemExit('the main block ran')\n")
                code = ("import sys\n"
                        "from torch_testing_ext._engine import _torch_private as p\n"
                        f"p.import_main_script({str(script)!r})\n"
                        "main = sys.modules['__main__']\n"
                        "print(main.__name__, main.VALUE, main is sys.modules['__mp_main__'], main.__file__)\n")
                completed = in_child_interpreter(code, timeout=60)
                self.assertEqual(completed.stdout.split(), ["__mp_main__", "42", "True", str(script)],
                                 completed.stderr)

    def test_warm_inductor_process_caches(self):
        with contract("warm_inductor_process_caches"):
            from torch._inductor import codecache, cpu_vec_isa

            with mock.patch.object(codecache, "torch_key", wraps=codecache.torch_key) as torch_key, \
                    mock.patch.object(cpu_vec_isa, "pick_vec_isa", wraps=cpu_vec_isa.pick_vec_isa) as pick:
                private.warm_inductor_process_caches()
            self.assertIn("torch._inductor.compile_fx", sys.modules)
            self.assertEqual((torch_key.call_count, pick.call_count), (1, 1))
            # Both are cached for the process: what a forked child inherits.
            self.assertEqual(cpu_vec_isa.valid_vec_isa_list.cache_info().currsize, 1)
            self.assertIs(codecache.torch_key(), codecache.torch_key())

    def test_register_faulty_rpc_backend(self):
        from torch.distributed import rpc

        with contract("register_faulty_rpc_backend"):
            private.register_faulty_rpc_backend()
            self.assertIn("FAULTY_TENSORPIPE", rpc.backend_registry.BackendType.__members__)

    def test_rref_context_debug_info(self):
        from torch.distributed import rpc

        with tempfile.TemporaryDirectory(prefix="selftest-rpc-") as folder, contract("rref_context_debug_info"):
            options = rpc.TensorPipeRpcBackendOptions(init_method=f"file://{folder}/init")
            rpc.init_rpc("worker0", backend=rpc.backend_registry.BackendType.TENSORPIPE, rank=0, world_size=1,
                         rpc_backend_options=options)
            try:
                info = private.rref_context_debug_info()
            finally:
                rpc.shutdown()
            for key in ("num_owner_rrefs", "num_forks", "num_pending_futures", "num_pending_users"):
                self.assertEqual(int(info[key]), 0, key)

    def test_shipped_suite_path(self):
        with contract("shipped_suite_path"):
            for relative, defines in (("distributed/distributed_test.py", "class DistributedTest"),
                                      ("distributed/rpc/rpc_test.py", "class RpcTest")):
                path = private.shipped_suite_path(relative)
                self.assertTrue(path.endswith(os.path.join("torch", "testing", "_internal", relative)), path)
                with open(path, encoding="utf-8") as f:
                    self.assertIn(defines, f.read())
        with self.assertRaisesRegex(FileNotFoundError, re.escape(f"torch {torch.__version__} does not ship "
                                                                 "torch/testing/_internal/no_such_suite.py")):
            private.shipped_suite_path("no_such_suite.py")

    def test_dtensor_op_strategy(self):
        from torch.distributed.tensor import DTensor

        def strategy(op_schema):
            raise AssertionError("not called here")

        op = torch.ops.aten.sum.default
        with contract("dtensor_op_strategy"):
            propagator = DTensor._op_dispatcher.sharding_propagator
            before = (propagator.op_strategy_funcs.get(op), propagator.op_to_schema_info.get(op))
            with private.dtensor_op_strategy(op, strategy):
                self.assertIs(propagator.op_strategy_funcs[op], strategy)
            self.assertEqual((propagator.op_strategy_funcs.get(op), propagator.op_to_schema_info.get(op)), before)

    def test_harness_refuses_dotted_test_names(self):
        # What torch's own harness does with a name_fn giving "x2.5", in a process of its own
        # (importing it changes torch's global state); named by parts, as no file here imports it.
        code = textwrap.dedent("""
            import importlib
            h = importlib.import_module("torch.testing." + "_internal.common_utils")

            class TestX(h.TestCase):
                @h.parametrize("x", [2.5], name_fn=lambda x: f"x{x}")
                def test_x(self, x):
                    pass

            try:
                h.instantiate_parametrized_tests(TestX)
            except RuntimeError as error:
                print("refused" if "test_x_x2.5" in str(error) else f"other: {error}")
            else:
                print("kept" if hasattr(TestX, "test_x_x2.5") else "neither")
        """)
        completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        with contract("harness_refuses_dotted_test_names"):
            self.assertEqual(private.harness_refuses_dotted_test_names(),
                             completed.stdout.split()[-1] == "refused")
        self.assertIn(completed.stdout.split()[-1], ("refused", "kept"))

    def test_test_method_name(self):
        with contract("test_method_name"):
            self.assertEqual(private.test_method_name(self), "test_test_method_name")

    def test_triton_has_backend(self):
        with contract("triton_has_backend"):
            self.assertIsInstance(private.triton_has_backend(), bool)

    def test_register_fake_backend(self):
        with contract("register_fake_backend"):
            # In a fresh interpreter first: there nothing (torch._dynamo) has registered it yet.
            code = ("import sys, torch, torch.distributed as dist\n"
                    "from torch_testing_ext._engine import _torch_private as p\n"
                    "assert 'torch._dynamo' not in sys.modules\n"
                    "p.register_fake_backend()\n"
                    "dist.init_process_group('fake', store=dist.HashStore(), rank=1, world_size=3)\n"
                    "print(dist.get_rank(), dist.get_world_size())\n")
            completed = in_child_interpreter(code)
            self.assertEqual(completed.stdout.strip(), "1 3", completed.stderr)
            private.register_fake_backend()
            self.assertIn("fake", dist.Backend.backend_list)
            dist.init_process_group("fake", store=dist.HashStore(), rank=1, world_size=3)
            try:
                self.assertEqual((dist.get_rank(), dist.get_world_size()), (1, 3))
                tensor = torch.ones(2)
                dist.all_reduce(tensor)  # communicates nothing
            finally:
                dist.destroy_process_group()

    def test_active_ddp_module(self):
        with contract("active_ddp_module"):
            module = torch.nn.Linear(1, 1)
            with private.active_ddp_module(module):
                self.assertIs(private.get_active_ddp_module(), module)
            self.assertIsNone(private.get_active_ddp_module())

    def test_get_active_ddp_module(self):
        with contract("get_active_ddp_module"):
            from torch.nn.parallel import DistributedDataParallel

            self.assertIsNone(private.get_active_ddp_module())
            module = torch.nn.Linear(1, 1)
            DistributedDataParallel._active_ddp_module = module  # as DDP's forward does
            try:
                self.assertIs(private.get_active_ddp_module(), module)
            finally:
                DistributedDataParallel._active_ddp_module = None

    def test_patch_dynamo_config(self):
        with contract("patch_dynamo_config"):
            before = private.dynamo_config_value("optimize_ddp")
            with private.patch_dynamo_config(optimize_ddp=not before):
                self.assertEqual(private.dynamo_config_value("optimize_ddp"), not before)
            self.assertEqual(private.dynamo_config_value("optimize_ddp"), before)

    def test_dynamo_config_value(self):
        with contract("dynamo_config_value"):
            for name in ("suppress_errors", "raise_on_ctx_manager_usage", "log_compilation_metrics",
                         "optimize_ddp", "enable_compiler_collectives"):
                self.assertIsInstance(private.dynamo_config_value(name), bool, name)

    def test_clear_dynamo_counters(self):
        with contract("clear_dynamo_counters"):
            import torch._dynamo.utils

            torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
            self.assertTrue(torch._dynamo.utils.counters)
            private.clear_dynamo_counters()
            self.assertFalse(torch._dynamo.utils.counters)
            torch.compiler.reset()

    def test_cpu_device_switch_disabled(self):
        with contract("cpu_device_switch_disabled"):
            from torch._dynamo.device_interface import CpuInterface

            original = CpuInterface.device
            with private.cpu_device_switch_disabled():
                with CpuInterface.device(0):
                    pass
            self.assertIs(CpuInterface.device, original)  # restored after the block

    def test_live_process_groups(self):
        with contract("live_process_groups"):
            self.assertEqual(private.live_process_groups(), [])
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            try:
                groups = private.live_process_groups()
                self.assertEqual(len(groups), 1)
                self.assertIsInstance(groups[0], dist.ProcessGroup)
            finally:
                dist.destroy_process_group()
            self.assertEqual(private.live_process_groups(), [])

    def test_clear_accelerator_workspaces(self):
        with contract("clear_accelerator_workspaces"):
            private.clear_accelerator_workspaces("cpu")  # nothing to free, nothing raised
            with mock.patch.object(torch._C, "_cuda_clearCublasWorkspaces", create=True) as clear:
                private.clear_accelerator_workspaces("cpu")
                clear.assert_not_called()
                private.clear_accelerator_workspaces("cuda:1")
                clear.assert_called_once_with()
            if torch.backends.cuda.is_built():  # PyPI's CUDA builds, also without a GPU
                self.assertTrue(callable(torch._C._cuda_clearCublasWorkspaces))
            if torch.cuda.is_available():
                torch.ones(8, 8, device="cuda") @ torch.ones(8, 8, device="cuda")
                private.clear_accelerator_workspaces("cuda:0")

    def test_privateuse1_backend_name(self):
        with contract("privateuse1_backend_name"):
            self.assertIsInstance(private.privateuse1_backend_name(), str)
            # Renaming is for good, so in a child interpreter.
            code = ("import torch\n"
                    "from torch_testing_ext._engine import _torch_private as p\n"
                    "before = p.privateuse1_backend_name()\n"
                    "torch.utils.rename_privateuse1_backend('tteunit')\n"
                    "print(before, p.privateuse1_backend_name())\n")
            completed = in_child_interpreter(code)
            self.assertEqual(completed.stdout.split(), ["privateuseone", "tteunit"], completed.stderr)

    def test_ddp_logging_data(self):
        with contract("ddp_logging_data"):
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            try:
                model = torch.nn.parallel.DistributedDataParallel(distributed_ranks.HalfUsed())
                self.assertEqual(private.ddp_logging_data(model)["iteration"], 0)
                self.assertNotIn("has_error", private.ddp_logging_data(model))
                model(torch.ones(1, 2)).sum().backward()
                with self.assertRaisesRegex(RuntimeError, "Expected to have finished reduction"):
                    model(torch.ones(1, 2))  # a parameter went unused in the previous step
                logged = private.ddp_logging_data(model)
                self.assertEqual(logged["has_error"], 1)
                self.assertIn("Expected to have finished reduction", logged["error"])
                del model  # before its group goes (see process_groups/teardown.py)
            finally:
                dist.destroy_process_group()

    # -- DTensor tests (dtensor_bases/) --

    @contextlib.contextmanager
    def _fake_world(self, world_size=4):
        from torch_testing_ext.distributed.fake_pg import FakeStore

        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world_size)
        try:
            yield
        finally:
            dist.destroy_process_group()

    def test_tree_flatten(self):
        with contract("tree_flatten"):
            leaves, spec = private.tree_flatten(((1, [2, 3]), {"a": 4}))
            self.assertEqual(leaves, [1, 2, 3, 4])
            self.assertEqual(spec.num_leaves, 4)

    def test_tree_unflatten(self):
        with contract("tree_unflatten"):
            leaves, spec = private.tree_flatten(((1, [2, 3]), {"a": 4}))
            self.assertEqual(private.tree_unflatten([5, 6, 7, 8], spec), ((5, [6, 7]), {"a": 8}))

    def test_is_functional_tensor(self):
        with contract("is_functional_tensor"):
            self.assertFalse(private.is_functional_tensor(torch.ones(1)))
            seen = []
            torch.func.functionalize(lambda x: seen.append(private.is_functional_tensor(x)) or x)(
                torch.ones(1))
            self.assertEqual(seen, [True])

    def test_local_tensor_api(self):
        with contract("local_tensor_api"):
            api = private.local_tensor_api()
            if api is None:
                self.skipTest(f"torch {torch.__version__} has no LocalTensor")
            with api.LocalTensorMode(frozenset(range(2))):
                doubled = api.maybe_run_for_local_tensor(lambda r: torch.tensor(float(r)))(
                    torch.SymInt(api.LocalIntNode({0: 0, 1: 1})))
                self.assertIsInstance(doubled, api.LocalTensor)
                with api.maybe_disable_local_tensor_mode():
                    self.assertNotIsInstance(torch.ones(1), api.LocalTensor)

    def test_local_int_values(self):
        with contract("local_int_values"):
            api = private.local_tensor_api()
            if api is None:
                self.skipTest(f"torch {torch.__version__} has no LocalTensor")
            value = torch.SymInt(api.LocalIntNode({0: 3, 1: 5}))
            self.assertEqual(private.local_int_values(value), {0: 3, 1: 5})

    def test_set_record_function_enabled(self):
        with contract("set_record_function_enabled"):
            def recorded():
                with torch.profiler.profile() as prof:
                    with torch.profiler.record_function("tte_range"):
                        pass
                return any(e.name == "tte_range" for e in prof.events())

            private.set_record_function_enabled(False)
            try:
                self.assertFalse(recorded())
            finally:
                private.set_record_function_enabled(True)
            self.assertTrue(recorded())

    def test_reset_dtensor_rng_tracker(self):
        with contract("reset_dtensor_rng_tracker"):
            from torch.distributed.tensor import _random

            # DTensor makes its tracker lazily, on accelerator meshes only: stand one in.
            self.assertIsNone(_random._rng_tracker)
            _random._rng_tracker = object()
            try:
                private.reset_dtensor_rng_tracker()
                self.assertIsNone(_random._rng_tracker)
            finally:
                _random._rng_tracker = None

    def test_shard_order_entry(self):
        with contract("shard_order_entry"):
            entry = private.shard_order_entry(1, [1, 0])
            self.assertEqual((entry.tensor_dim, entry.mesh_dims), (1, (1, 0)))

    def test_redistribute_to_shard_order(self):
        with contract("redistribute_to_shard_order"):
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.tensor import Shard, distribute_tensor

            with self._fake_world():
                mesh = init_device_mesh("cpu", (2, 2))
                dt = distribute_tensor(torch.zeros(8, 4), mesh, [Shard(0), Shard(0)])
                order = (private.shard_order_entry(0, (1, 0)),)
                moved = private.redistribute_to_shard_order(dt, (Shard(0), Shard(0)), order)
                self.assertIsNot(moved, dt)
                self.assertEqual(moved._spec.shard_order, order)
                self.assertEqual(moved.placements, (Shard(0), Shard(0)))
                self.assertIs(private.redistribute_to_shard_order(moved, moved.placements, order),
                              moved)

    def test_use_plain_shard_order(self):
        with contract("use_plain_shard_order"):
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.tensor import Shard, distribute_tensor

            with self._fake_world():
                mesh = init_device_mesh("cpu", (2, 2))
                dt = distribute_tensor(torch.zeros(8, 4), mesh, [Shard(0), Shard(1)])
                dt._spec.use_strided_shard_as_shard_order = True
                private.use_plain_shard_order(dt)
                self.assertFalse(dt._spec.use_strided_shard_as_shard_order)
                self.assertEqual([(e.tensor_dim, e.mesh_dims) for e in dt._spec.shard_order],
                                 [(0, (0,)), (1, (1,))])

    def test_concatenate_meshes(self):
        with contract("concatenate_meshes"):
            from torch.distributed.device_mesh import init_device_mesh

            with self._fake_world():
                mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("ep", "tp"))
                joined = private.concatenate_meshes([mesh["ep"], mesh["tp"]])
                self.assertEqual(joined.shape, (2, 2))
                self.assertEqual(joined.mesh_dim_names, ("ep", "tp"))

    def test_made_by_device_mesh(self):
        with contract("made_by_device_mesh"):
            from torch.distributed.device_mesh import init_device_mesh

            with self._fake_world():
                mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
                own = dist.new_group([0, 1])
                self.assertTrue(all(private.made_by_device_mesh(group) for group in mesh.get_all_groups()))
                self.assertFalse(private.made_by_device_mesh(own))
                self.assertFalse(private.made_by_device_mesh(dist.group.WORLD))

    def test_device_mesh_group_names(self):
        with contract("device_mesh_group_names"):
            from torch.distributed.device_mesh import init_device_mesh

            with self._fake_world():
                mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
                self.assertEqual(private.device_mesh_group_names(mesh),
                                 tuple(group.group_name for group in mesh.get_all_groups()))
                self.assertEqual(private.device_mesh_group_names(mesh["tp"]), (mesh.get_group("tp").group_name,))

    def test_clear_dtensor_caches(self):
        with contract("clear_dtensor_caches"):
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.tensor import Shard, distribute_tensor

            def mesh_of_a_result():
                mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
                return mesh, (distribute_tensor(torch.ones(4, 4), mesh, [Shard(0), Shard(1)]) + 1).device_mesh

            with self._fake_world():
                try:
                    first, _ = mesh_of_a_result()
                    second, cached = mesh_of_a_result()  # a mesh equal to the first, cached results of it
                    self.assertIs(cached, first)
                    private.clear_dtensor_caches()
                    third, computed = mesh_of_a_result()
                    self.assertIs(computed, third)
                finally:
                    private.clear_dtensor_caches()  # no mesh of this world for a later test

    # -- FSDP tests (fsdp_bases/) --

    @contextlib.contextmanager
    def _fsdp_step_counts(self, owner, *names):
        """Run one forward and backward of a fully_shard-ed two-layer model in a fake world of
        2 ranks (every collective is issued, none communicates); yield a Counter that holds,
        after the block, the calls of each ``owner.<name>``."""
        import collections

        from torch.distributed.fsdp import fully_shard

        from torch_testing_ext.distributed.fake_pg import FakeStore

        counts = collections.Counter()

        def counting(name, original):
            def replacement(*args, **kwargs):
                counts[name] += 1
                return original(*args, **kwargs)
            return replacement

        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
        try:
            model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))
            fully_shard(model[0])
            fully_shard(model)
            with contextlib.ExitStack() as patches:
                for name in names:
                    patches.enter_context(mock.patch.object(owner, name, counting(name, getattr(owner, name))))
                model(torch.ones(2, 4, requires_grad=True)).sum().backward()
            yield counts
        finally:
            dist.destroy_process_group()

    def test_fsdp_param_group_module(self):
        with contract("fsdp_param_group_module"):
            module = private.fsdp_param_group_module()
            with self._fsdp_step_counts(module, "foreach_all_gather", "foreach_reduce") as counts:
                pass
            self.assertGreaterEqual(counts["foreach_all_gather"], 2)  # each group in forward
            self.assertEqual(counts["foreach_reduce"], 2)  # one per group in backward

    def test_fsdp_param_group_class(self):
        with contract("fsdp_param_group_class"):
            group_class = private.fsdp_param_group_class()
            self.assertEqual(group_class.__name__, "FSDPParamGroup")
            with self._fsdp_step_counts(group_class, "unshard", "reshard", "post_backward") as counts:
                pass
            self.assertGreaterEqual(counts["unshard"], 2)
            self.assertGreaterEqual(counts["reshard"], 2)
            self.assertEqual(counts["post_backward"], 2)

    def test_fsdp_post_backward_function_class(self):
        with contract("fsdp_post_backward_function_class"):
            function = private.fsdp_post_backward_function_class()
            self.assertTrue(issubclass(function, torch.autograd.Function))
            with self._fsdp_step_counts(function, "backward") as counts:
                pass
            self.assertGreaterEqual(counts["backward"], 1)

    def test_fsdp_hybrid_sharding_strategies(self):
        with contract("fsdp_hybrid_sharding_strategies"):
            names = sorted(s.name for s in private.fsdp_hybrid_sharding_strategies())
            self.assertEqual(names, ["HYBRID_SHARD", "_HYBRID_SHARD_ZERO2"])

    def test_composable_checkpoint(self):
        with contract("composable_checkpoint"):
            calls = []
            model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
            model[0].register_forward_hook(lambda *args: calls.append("forward"))
            private.composable_checkpoint()(model)
            model(torch.ones(1, 2, requires_grad=True)).sum().backward()
            self.assertEqual(calls, ["forward", "forward"])  # recomputed in backward
            self.assertIsNotNone(model[0].weight.grad)

    def test_inductor_config(self):
        with contract("inductor_config"):
            import torch._inductor.config

            config = private.inductor_config()
            before = config.compile_threads
            self.assertEqual(before, torch._inductor.config.compile_threads)
            config.compile_threads = before + 1
            try:
                self.assertEqual(torch._inductor.config.compile_threads, before + 1)
            finally:
                config.compile_threads = before
            self.assertEqual(torch._inductor.config.compile_threads, before)

    # -- the threaded world (thread_ranks/) --

    def test_c10d_world(self):
        with contract("c10d_world"):
            from torch_testing_ext._engine.process_groups.c10d_world_per_thread import ThreadLocalWorld

            world_class = type(private.c10d_world())
            self.assertIs(world_class, dist.distributed_c10d._World)
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            try:
                self.assertIs(private.c10d_world().default_pg, dist.group.WORLD)
            finally:
                dist.destroy_process_group()
            fields = [name for name in dir(world_class) if isinstance(getattr(world_class, name), property)]
            self.assertIn("default_pg", fields)
            self.assertIn("pg_map", fields)
            # Every field torch's world has, the thread-local world has too.
            self.assertEqual([f for f in fields if not hasattr(ThreadLocalWorld, f)], [])

    def test_set_c10d_world(self):
        with contract("set_c10d_world"):
            from torch_testing_ext._engine.process_groups.c10d_world_per_thread import ThreadLocalWorld

            original, replacement = private.c10d_world(), ThreadLocalWorld()
            private.set_c10d_world(replacement)
            try:
                dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
                self.assertIs(replacement.default_pg, dist.group.WORLD)  # c10d used ours
                self.assertEqual(list(replacement.pg_map), [dist.group.WORLD])
                self.assertIsNone(original.default_pg)
                dist.destroy_process_group()
                self.assertEqual(dict(replacement.pg_map), {})
            finally:
                private.set_c10d_world(original)
            self.assertIs(private.c10d_world(), original)

    def test_set_thread_isolated_group_registry(self):
        with contract("set_thread_isolated_group_registry"):
            import threading

            from torch.distributed.distributed_c10d import _resolve_process_group

            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            name, found = dist.group.WORLD.group_name, []

            def resolve():
                try:
                    found.append(_resolve_process_group(name) is not None)
                except RuntimeError:
                    found.append(False)

            try:
                for enabled in (True, False):
                    private.set_thread_isolated_group_registry(enabled)
                    thread = threading.Thread(target=resolve)
                    thread.start()
                    thread.join()
                self.assertEqual(found, [False, True])  # isolated: the main thread's group unseen
            finally:
                private.set_thread_isolated_group_registry(False)
                dist.destroy_process_group()

    def test_thread_frames(self):
        with contract("thread_frames"):
            import threading

            release = threading.Event()

            def parked():
                release.wait()

            thread = threading.Thread(target=parked)
            thread.start()
            try:
                frame, names = private.thread_frames()[thread.ident], []
                while frame is not None:
                    names.append(frame.f_code.co_name)
                    frame = frame.f_back
                self.assertIn("parked", names)
            finally:
                release.set()
                thread.join()

    def test_raise_in_thread(self):
        with contract("raise_in_thread"):
            import threading
            import time

            raised = []

            def busy():
                try:
                    while True:
                        time.sleep(0.01)
                except KeyError as error:
                    raised.append(type(error))

            thread = threading.Thread(target=busy)
            thread.start()
            self.assertTrue(private.raise_in_thread(thread.ident, KeyError))
            thread.join(10)
            self.assertFalse(thread.is_alive())
            self.assertEqual(raised, [KeyError])
            self.assertFalse(private.raise_in_thread(0, KeyError))  # no such thread

    def test_answer_source_rank(self):
        with contract("answer_source_rank"):
            from torch_testing_ext.common_distributed import spawn_threads_and_init_comms

            @spawn_threads_and_init_comms(world_size=3, timeout=60)
            def receive_from_any(test):
                t = torch.zeros(1)
                if dist.get_rank() == 2:
                    dist.send(torch.ones(1), dst=0)
                elif dist.get_rank() == 0:
                    test.assertEqual(dist.recv(t), 2)  # dist.recv asks the work's _source_rank()
                    test.assertEqual(t.item(), 1.0)

            receive_from_any(self)

    def test_sharded_tensor_api(self):
        with contract("sharded_tensor_api"):
            api = private.sharded_tensor_api()
            spec = private.sharding_spec_api().ChunkShardingSpec(dim=0, placements=["rank:0/cpu"])
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            try:
                st = api.ones(spec, 4, 2)
                self.assertIsInstance(st, api.ShardedTensor)
                self.assertEqual(st.local_tensor(), torch.ones(4, 2))
                self.assertEqual(api.rand(spec, 4, 2).size(), torch.Size([4, 2]))
            finally:
                dist.destroy_process_group()

    def test_sharding_spec_api(self):
        with contract("sharding_spec_api"):
            specs = private.sharding_spec_api()
            block = specs.ShardMetadata(shard_offsets=[0, 0], shard_sizes=[2, 2], placement="rank:0/cpu")
            self.assertEqual(specs.EnumerableShardingSpec([block]).shards, [block])
            self.assertEqual(specs.ChunkShardingSpec(dim=1, placements=["rank:0/cpu"]).dim, 1)

    def test_make_wrapper_subclass(self):
        with contract("make_wrapper_subclass"):
            class Shell(torch.Tensor):
                @classmethod
                def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                    raise NotImplementedError(func)

            shell = private.make_wrapper_subclass(Shell, (2, 3), dtype=torch.float64, device="cpu")
            self.assertIsInstance(shell, Shell)
            self.assertEqual((shell.shape, shell.dtype), (torch.Size([2, 3]), torch.float64))

    def test_correct_aliasing(self):
        with contract("correct_aliasing"):
            from torch_testing_ext.two_tensor import TwoTensor  # its dispatch hands out through it

            t = TwoTensor(torch.ones(2), torch.zeros(2))
            self.assertIs(t.add_(1), t)
            self.assertIs(t.view(2, 1)._base, t)

    def test_tensorpipe_options(self):
        with contract("tensorpipe_options"):
            options = private.tensorpipe_options(["shm", "uv"], init_method="file:///nonexistent")
            self.assertEqual(options.init_method, "file:///nonexistent")
            from torch.distributed import rpc

            with self.assertRaises(TypeError):  # the keywords are checked: _transports is one
                rpc.TensorPipeRpcBackendOptions(_no_such_option=["shm"])

    def test_jit_tcp_store(self):
        from torch_testing_ext._engine.process_groups.ports import find_free_port

        try:
            store = private.jit_tcp_store("localhost", find_free_port(), 1, True, 30_000)
        except RuntimeError as error:
            if "does not exist" not in str(error):
                raise
            self.skipTest("this torch build registers no TorchScript TCPStore class "
                          "(upstream's create_tcp_store(jit_class=True) fails here the same way)")
        with contract("jit_tcp_store"):
            store.set("key", "value")
            self.assertEqual(bytes(store.get("key")), b"value")

    def test_fsdp_unsharded_between_forward_and_backward(self):
        with contract("fsdp_unsharded_between_forward_and_backward"):
            from torch.distributed.fsdp import ShardingStrategy

            strategies = private.fsdp_unsharded_between_forward_and_backward()
            self.assertIn(ShardingStrategy.SHARD_GRAD_OP, strategies)
            self.assertNotIn(ShardingStrategy.FULL_SHARD, strategies)
            self.assertEqual(len(strategies), 2)

    def test_preloaded_private_modules(self):
        import importlib

        for name in private.PRELOADED_PRIVATE_MODULES:
            importlib.import_module(name)

    def test_device_sleep_kernel(self):
        with contract("device_sleep_kernel"):
            kernel = private.device_sleep_kernel("cuda")
            self.assertTrue(callable(kernel))
            if torch.cuda.is_available():
                kernel(1000)
                torch.cuda.synchronize()

    def test_checkpoint_extension_api(self):
        import torch.distributed.checkpoint as dcp

        from torch_testing_ext.distributed.checkpoint_utils import Rot13Example, get_test_extension_registry

        with contract("checkpoint_extension_api"), tempfile.TemporaryDirectory() as directory:
            api = private.checkpoint_extension_api()
            self.assertTrue(issubclass(Rot13Example, api.StreamTransformExtension))
            self.assertIsInstance(get_test_extension_registry(), api.ExtensionRegistry)
            # As upstream's tests use it: the writer transforms every file, the reader undoes it.
            dcp.save({"w": torch.arange(6.0)}, no_dist=True,
                     storage_writer=dcp.FileSystemWriter(directory, _extensions=[Rot13Example()]))
            loaded = {"w": torch.zeros(6)}
            dcp.load(loaded, no_dist=True, storage_reader=dcp.FileSystemReader(
                directory, _extension_registry=get_test_extension_registry()))
            self.assertEqual(loaded["w"], torch.arange(6.0))

    def test_report_rref_leaks(self):
        from torch.distributed.rpc import api

        before = api._ignore_rref_leak
        try:
            with contract("report_rref_leaks"):
                self.assertIsInstance(before, bool)
                private.report_rref_leaks()
                self.assertIs(api._ignore_rref_leak, False)
        finally:
            api._ignore_rref_leak = before

    def test_torchcomms_process_group(self):
        from torch.distributed import distributed_c10d as c10d

        with contract("torchcomms_process_group"):
            self.assertTrue(callable(c10d._register_pg_in_world))
            self.assertTrue(callable(c10d.GroupName))
            for method in ("_register_backend", "_set_default_backend", "_set_group_name"):
                self.assertTrue(callable(getattr(dist.ProcessGroup, method)), method)
            try:
                import torchcomms  # noqa: F401
            except ImportError:
                return  # torch binds _BackendWrapper only when torchcomms is installed
            self.assertTrue(callable(c10d._BackendWrapper))

    # -- the collective ledger (ledger.recording) --

    def test_never_compile_frames(self):
        with contract("never_compile_frames"):
            compiled_frames = []

            def counting_backend(graph, example_inputs):
                compiled_frames.append(graph)
                return graph.forward

            def marked(x):
                return x * 3

            def unmarked(x):
                return x * 5

            private.never_compile_frames(marked.__code__)

            @torch._dynamo.disable(recursive=False)
            def eager_middle(x):  # runs as it is; the frames it calls are candidates
                return marked(x) + unmarked(x)

            def outer(x):
                return eager_middle(x + 1)

            torch._dynamo.reset()
            try:
                out = torch.compile(outer, backend=counting_backend)(torch.ones(2))
            finally:
                torch._dynamo.reset()
            self.assertEqual(out.tolist(), [16.0, 16.0])
            self.assertEqual(len(compiled_frames), 2)  # outer's graph and unmarked's, not marked's (else 3)

    def test_caller_frame(self):
        with contract("caller_frame"):
            def inner():
                return private.caller_frame(0), private.caller_frame(1)

            own, above = inner()
            self.assertEqual((own.f_code.co_name, above.f_code.co_name), ("inner", "test_caller_frame"))


    def test_functional_collective_functions(self):
        with contract("functional_collective_functions"):
            functions = private.functional_collective_functions()
            for name in ("all_reduce", "all_gather_single", "reduce_scatter_single", "all_to_all_single", "broadcast"):
                self.assertIn(name, functions)
                self.assertEqual(functions[name].__module__, "torch.distributed._functional_collectives")
                self.assertIn("group", inspect.signature(functions[name]).parameters)
            # These call one of the above through the module (the ledger's self-test checks that
            # each is recorded once).
            self.assertFalse({"all_gather_tensor", "reduce_scatter_tensor", "all_reduce_inplace"} & set(functions))

    def test_set_functional_collective_function(self):
        with contract("set_functional_collective_function"):
            import torch.distributed._functional_collectives as funcol
            from torch.distributed.tensor import _collective_utils

            original = funcol.all_reduce
            calls = []
            private.set_functional_collective_function("all_reduce", lambda *args: calls.append(args) or "wrapped")
            try:
                # DTensor's own modules look it up on the module at each call.
                self.assertIs(_collective_utils.funcol, funcol)
                self.assertEqual(funcol.all_reduce(1, 2, 3), "wrapped")
            finally:
                private.set_functional_collective_function("all_reduce", original)
            self.assertEqual(calls, [(1, 2, 3)])
            self.assertIs(funcol.all_reduce, original)

    def test_functional_group_name(self):
        with contract("functional_group_name"):
            self.assertEqual(private.functional_group_name("7"), "7")
            store = dist.HashStore()
            dist.init_process_group("gloo", store=store, rank=0, world_size=1)
            try:
                world = dist.group.WORLD
                self.assertEqual(private.functional_group_name(world), world.group_name)
                from torch.distributed.device_mesh import init_device_mesh

                mesh = init_device_mesh("cpu", (1,))
                self.assertEqual(private.functional_group_name((mesh, 0)), mesh.get_group(0).group_name)
                self.assertEqual(private.functional_group_name(mesh), mesh.get_group().group_name)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    self.assertEqual(private.functional_group_name([0]), world.group_name)  # ranks
                self.assertEqual(caught, [])  # without functional collectives' deprecation warning
            finally:
                dist.destroy_process_group()

    def test_hidden_from_warnings(self):
        with contract("hidden_from_warnings"):
            def deprecated():
                warnings.warn("old", FutureWarning, stacklevel=2)  # names its caller's line

            def wrapper():
                return deprecated()

            hidden = private.hidden_from_warnings(wrapper)
            self.assertEqual((hidden.__name__, hidden.__qualname__), (wrapper.__name__, wrapper.__qualname__))
            for called, expected_file in ((wrapper, __file__), (hidden, __file__)):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    line = sys._getframe().f_lineno + 1
                    called()
                (warning,) = caught
                where = (warning.filename, warning.lineno)
                if called is wrapper:  # the wrapper's own line, as any wrapper
                    self.assertEqual(where[0], expected_file)
                    self.assertNotEqual(where[1], line)
                else:  # skipped: the line that called the wrapper
                    self.assertEqual(where, (expected_file, line))

    def test_torch_function_mode_check(self):
        with contract("torch_function_mode_check"):
            from torch.overrides import TorchFunctionMode

            active = private.torch_function_mode_check()
            self.assertFalse(active())
            with TorchFunctionMode():
                self.assertTrue(active())

    def test_torch_function_disabled(self):
        with contract("torch_function_disabled"):
            from torch.overrides import TorchFunctionMode

            seen = []

            class Names(TorchFunctionMode):
                def __torch_function__(self, func, types, args=(), kwargs=None):
                    seen.append(func)
                    return func(*args, **(kwargs or {}))

            t = torch.ones(2)
            with Names():
                with private.torch_function_disabled():
                    self.assertEqual((tuple(t.shape), t.dtype), ((2,), torch.float32))
                self.assertEqual(seen, [])
                t.shape  # noqa: B018 - seen outside the block
            self.assertEqual(len(seen), 1)

    def test_functional_collective_ops(self):
        with contract("functional_collective_ops"):
            ops = private.functional_collective_ops()
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            try:
                result = ops.wait_tensor(ops.all_reduce(torch.ones(2), "sum", dist.group.WORLD.group_name))
                self.assertEqual(result.tolist(), [1.0, 1.0])
                for name in ("all_gather_into_tensor", "reduce_scatter_tensor", "broadcast"):
                    self.assertTrue(hasattr(ops, name), name)
            finally:
                dist.destroy_process_group()

    def test_torch_dispatch_disabled(self):
        with contract("torch_dispatch_disabled"):
            from torch.utils._python_dispatch import TorchDispatchMode

            seen = []

            class Ops(TorchDispatchMode):
                def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                    seen.append(func)
                    return func(*args, **(kwargs or {}))

            t = torch.ones(2)
            with Ops():
                with private.torch_dispatch_disabled():
                    copy = t.to("cpu", copy=True)
                self.assertEqual(seen, [])
                self.assertEqual(copy.tolist(), [1.0, 1.0])
                t.to("cpu", copy=True)  # seen outside the block
            self.assertGreaterEqual(len(seen), 1)

    def test_async_collective_result(self):
        with contract("async_collective_result"):
            import torch.distributed._functional_collectives as funcol

            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            try:
                waiting = funcol.all_reduce(torch.ones(2), "sum", dist.group.WORLD)
                self.assertIs(type(waiting), funcol.AsyncCollectiveTensor)
                result = private.async_collective_result(waiting)
                self.assertIs(type(result), torch.Tensor)
                self.assertEqual(result.tolist(), [1.0, 1.0])
                self.assertIsNone(private.async_collective_result(torch.ones(2)))
            finally:
                dist.destroy_process_group()

    def test_group_ranks_by_name(self):
        with contract("group_ranks_by_name"):
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
            try:
                self.assertEqual(private.group_ranks_by_name(dist.group.WORLD.group_name), (0,))
            finally:
                dist.destroy_process_group()

    def test_mkldnn_bf16_supported(self):
        with contract("mkldnn_bf16_supported"):
            supported = private.mkldnn_bf16_supported()
            self.assertIsInstance(supported, bool)
            if not torch.backends.mkldnn.is_available():
                self.assertFalse(supported)

    def test_dynamo_supported(self):
        with contract("dynamo_supported"):
            supported = private.dynamo_supported()
            self.assertIsInstance(supported, bool)
            if sys.platform == "linux":  # and a Python this torch supports, as here
                self.assertTrue(supported)

    def test_inductor_supported(self):
        with contract("inductor_supported"):
            supported = private.inductor_supported()
            self.assertIsInstance(supported, bool)
            self.assertLessEqual(supported, private.dynamo_supported())  # never without Dynamo

def _private_uses(source):
    """``line: what`` for each private torch/CPython name that ``source`` uses."""
    tree = ast.parse(source)
    roots = {"torch", "multiprocessing", "unittest", "expecttest", "dist", "threading", "sys", "os"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if any(part.startswith("_") for part in alias.name.split(".")):
                    found.append(f"{node.lineno}: import {alias.name}")
                roots.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            if top in {"torch", "multiprocessing", "unittest", "expecttest"}:
                if any(part.startswith("_") for part in node.module.split(".")):
                    found.append(f"{node.lineno}: from {node.module} import ...")
                for alias in node.names:
                    if alias.name.startswith("_"):
                        found.append(f"{node.lineno}: from {node.module} import {alias.name}")
                    roots.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__") and node.attr != "_exit":
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in roots:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
            elif node.attr in ("_testMethodName", "_exc_info_to_string", "_outcome"):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(found, key=lambda use: int(use.split(":")[0]))


class TestPrivateAccessesStayInOneModule(TestCase):
    def test_no_private_access_elsewhere(self):
        offenders = {}
        for path in sorted(PACKAGE.rglob("*.py")):
            if path.name == "_torch_private.py":
                continue
            uses = _private_uses(path.read_text())
            if uses:
                offenders[str(path.relative_to(PACKAGE))] = uses
        self.assertEqual(offenders, {}, "move these into torch_testing_ext/_engine/_torch_private.py")

    def test_the_scan_finds_a_private_access(self):
        text = ("import torch\nimport torch._dynamo.utils as u\ntorch._dynamo.reset()\n"
                "from multiprocessing import forkserver\nforkserver._forkserver\n"
                "self._testMethodName\ntorch.compiler.reset()\nos._exit(0)\n")
        self.assertEqual(_private_uses(text), ["2: import torch._dynamo.utils",
                                               "3: torch._dynamo",
                                               "5: forkserver._forkserver",
                                               "6: self._testMethodName"])
