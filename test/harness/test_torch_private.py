"""Contract tests for every private torch/CPython access (``torch_testing_ext._torch_private``).

Each test exercises one access the way the harness uses it. When a release changes one, the
failure names the access and the torch and Python versions, so the fix is obvious. A last
test checks that no other module of the package reaches for a private name.
"""

import ast
import contextlib
import multiprocessing
import os
import pathlib
import subprocess
import sys

import torch
import torch.distributed as dist

import torch_testing_ext
from torch_testing_ext import _torch_private as private
from torch_testing_ext.common_utils import TestCase, run_tests

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


class TestPrivateAccessContracts(TestCase):
    def test_every_access_has_a_contract_test(self):
        tested = {name.removeprefix("test_") for name in dir(self) if name.startswith("test_")}
        self.assertEqual(sorted(set(private.ACCESSES) - tested), [])

    def test_stop_forkserver(self):
        with contract("stop_forkserver"):
            context = multiprocessing.get_context("forkserver")
            process = context.Process(target=int)
            process.start()
            process.join()
            server = multiprocessing.forkserver._forkserver
            self.assertIsNotNone(server._forkserver_pid)
            private.stop_forkserver()
            self.assertIsNone(server._forkserver_pid)

    def test_forkserver_pid(self):
        with contract("forkserver_pid"):
            private.stop_forkserver()
            self.assertIsNone(private.forkserver_pid())
            process = multiprocessing.get_context("forkserver").Process(target=int)
            process.start()
            process.join()
            pid = private.forkserver_pid()
            self.assertIsInstance(pid, int)
            self.assertEqual(process.exitcode, 0)
            with open(f"/proc/{pid}/stat") as stat:
                self.assertEqual(int(stat.read().rsplit(")", 1)[1].split()[1]), os.getpid())
            private.stop_forkserver()

    def test_stop_resource_tracker(self):
        with contract("stop_resource_tracker"):
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
            pid = resource_tracker._resource_tracker._pid
            self.assertTrue(os.path.exists(f"/proc/{pid}"))
            private.stop_resource_tracker()
            self.assertFalse(os.path.exists(f"/proc/{pid}"))  # stopped and reaped
            private.stop_resource_tracker()  # stopping twice is harmless

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
                    "from torch_testing_ext import _torch_private as p\n"
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

    def test_set_multiprocessing_tempdir(self):
        with contract("set_multiprocessing_tempdir"):
            config = multiprocessing.current_process()._config
            saved = config.pop("tempdir", None)
            try:
                self.assertEqual(private.set_multiprocessing_tempdir("/tmp/x"), "/tmp/x")
                self.assertEqual(private.set_multiprocessing_tempdir("/tmp/y"), "/tmp/x")
            finally:
                config.pop("tempdir", None)
                if saved is not None:
                    config["tempdir"] = saved

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
                    "from torch_testing_ext import _torch_private as p\n"
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

            with private.cpu_device_switch_disabled():
                with CpuInterface.device(0):
                    pass
            self.assertIsNot(CpuInterface.device, None)

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

    def test_privateuse1_backend_name(self):
        with contract("privateuse1_backend_name"):
            self.assertIsInstance(private.privateuse1_backend_name(), str)
            # Renaming is for good, so in a child interpreter.
            code = ("import torch\n"
                    "from torch_testing_ext import _torch_private as p\n"
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

    def test_preloaded_private_modules(self):
        import importlib

        for name in private.PRELOADED_PRIVATE_MODULES:
            importlib.import_module(name)


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
        self.assertEqual(offenders, {}, "move these into torch_testing_ext/_torch_private.py")

    def test_the_scan_finds_a_private_access(self):
        text = ("import torch\nimport torch._dynamo.utils as u\ntorch._dynamo.reset()\n"
                "from multiprocessing import forkserver\nforkserver._forkserver\n"
                "self._testMethodName\ntorch.compiler.reset()\nos._exit(0)\n")
        self.assertEqual(_private_uses(text), ["2: import torch._dynamo.utils",
                                               "3: torch._dynamo",
                                               "5: forkserver._forkserver",
                                               "6: self._testMethodName"])


if __name__ == "__main__":
    run_tests()
