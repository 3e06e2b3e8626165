"""Every private torch and CPython access of the package, each behind one named function.

A torch or Python release may rename or change any of these; when it does, the contract test
in ``test/harness/test_torch_private.py`` fails with the access's name and the torch version,
and only this module needs mending. :data:`CHECKED_RELEASES` names the releases on which every
contract test passed.
Code elsewhere in the package uses the public API, or one of these functions, never a private
name of torch or CPython.

:data:`ACCESSES` lists them, so the contract test can check that none goes untested.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import sys
import unittest
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypeVar

__all__ = [
    "ACCESSES",
    "PrivateAccess",
    "PRELOADED_PRIVATE_MODULES",
    "forkserver_context_of",
    "ServerProcess",
    "forkserver_process",
    "forget_forkserver",
    "stop_resource_tracker",
    "run_multiprocessing_finalizers",
    "call_after_multiprocessing_exit",
    "multiprocessing_tempdir",
    "triton_has_backend",
    "register_fake_backend",
    "active_ddp_module",
    "get_active_ddp_module",
    "patch_dynamo_config",
    "dynamo_config_value",
    "clear_dynamo_counters",
    "cpu_device_switch_disabled",
    "live_process_groups",
    "clear_accelerator_workspaces",
    "test_method_name",
    "main_script_path",
    "import_main_script",
    "warm_inductor_process_caches",
    "shipped_suite_path",
    "privateuse1_backend_name",
    "ddp_logging_data",
    "tree_flatten",
    "tree_unflatten",
    "is_functional_tensor",
    "local_tensor_api",
    "set_record_function_enabled",
    "reset_dtensor_rng_tracker",
    "shard_order_entry",
    "redistribute_to_shard_order",
    "use_plain_shard_order",
    "concatenate_meshes",
    "made_by_device_mesh",
    "device_mesh_group_names",
    "clear_dtensor_caches",
    "dtensor_op_strategy",
    "fsdp_param_group_module",
    "fsdp_param_group_class",
    "fsdp_post_backward_function_class",
    "fsdp_hybrid_sharding_strategies",
    "composable_checkpoint",
    "inductor_config",
    "local_int_values",
    "c10d_world",
    "set_c10d_world",
    "set_thread_isolated_group_registry",
    "thread_frames",
    "caller_frame",
    "raise_in_thread",
    "answer_source_rank",
    "sharded_tensor_api",
    "sharding_spec_api",
    "make_wrapper_subclass",
    "correct_aliasing",
    "tensorpipe_options",
    "jit_tcp_store",
    "fsdp_unsharded_between_forward_and_backward",
    "device_sleep_kernel",
    "checkpoint_extension_api",
    "report_rref_leaks",
    "rref_context_debug_info",
    "register_faulty_rpc_backend",
    "torchcomms_process_group",
    "functional_collective_functions",
    "set_functional_collective_function",
    "functional_group_name",
    "torch_function_mode_check",
    "hidden_from_warnings",
    "HIDDEN_FROM_WARNINGS",
    "torch_function_disabled",
    "torch_dispatch_disabled",
    "functional_collective_ops",
    "async_collective_result",
    "group_ranks_by_name",
    "never_compile_frames",
    "harness_refuses_dotted_test_names",
    "mkldnn_bf16_supported",
    "dynamo_supported",
    "inductor_supported",
    "built_with_lapack",
    "built_with_spectral",
    "dsl_available",
]

_F = TypeVar("_F", bound=Callable[..., Any])


# The releases whose suite run (tools/torch_matrix.py) passed every contract test below.
CHECKED_RELEASES = ("2.13.0", "2.14.1", "2.15.0")


class PrivateAccess:
    """What one function of this module touches."""

    def __init__(self, function: str, touches: str) -> None:
        self.function = function
        self.touches = touches

    def __repr__(self) -> str:
        return f"{self.function}: {self.touches} (checked on torch {', '.join(CHECKED_RELEASES)})"


ACCESSES: dict[str, PrivateAccess] = {}


def _private(touches: str) -> Callable[[_F], _F]:
    def register(function: _F) -> _F:
        ACCESSES[function.__name__] = PrivateAccess(function.__name__, touches)
        return function

    return register


# -- CPython --------------------------------------------------------------------------------

@_private("multiprocessing.forkserver.ForkServer(), an instance of our own beside the process-wide one, and "
          "multiprocessing.popen_forkserver.Popen._launch run with 'forkserver' bound to it")
def forkserver_context_of(server: multiprocessing.forkserver.ForkServer) -> multiprocessing.context.ForkServerContext:
    """A ``forkserver`` context whose processes are forked from ``server`` (a
    ``multiprocessing.forkserver.ForkServer()`` of the caller's own), not from the one server
    the process shares with every other user of ``get_context("forkserver")``.

    CPython offers no public way to choose the server: its ``Popen._launch`` asks the module's
    ``connect_to_new_process``. Ours runs that same function (each Python's own) with the name
    ``forkserver`` bound to a view of the module whose ``connect_to_new_process`` is
    ``server``'s.
    """
    import multiprocessing.popen_forkserver as popen_forkserver
    import types

    module = multiprocessing.forkserver

    class _ServerView(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            return getattr(module, name)

    view = _ServerView(module.__name__)
    view.connect_to_new_process = server.connect_to_new_process  # type: ignore[attr-defined]  # the view's own
    launch_globals = {**popen_forkserver.__dict__, "forkserver": view}
    base_launch = popen_forkserver.Popen._launch  # type: ignore[attr-defined]  # not in typeshed

    class _Popen(popen_forkserver.Popen):
        _launch = types.FunctionType(base_launch.__code__, launch_globals, base_launch.__name__,
                                     base_launch.__defaults__, base_launch.__closure__)

    key = len(_SERVER_POPENS)
    _SERVER_POPENS[key] = _Popen

    class _Context(multiprocessing.context.ForkServerContext):
        def Process(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]  # made, not a class
            process = ServerProcess(*args, **kwargs)
            process.server_key = key
            return process

    return _Context()


# The Popen classes of forkserver_context_of's servers, by key: a process object is pickled
# for its server, so its class is this module's, and it names its server by a number.
_SERVER_POPENS: dict[int, Any] = {}


class ServerProcess(multiprocessing.context.ForkServerProcess):
    """A process forked from the server of a context that :func:`forkserver_context_of` made."""

    server_key = -1

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return _SERVER_POPENS[process_obj.server_key](process_obj)


@_private("multiprocessing.forkserver.ForkServer._forkserver_pid, _forkserver_alive_fd")
def forkserver_process(server: multiprocessing.forkserver.ForkServer) -> tuple[int | None, int | None]:
    """The pid of ``server``'s process (None when it has not started) and the write end of
    its "alive" pipe, which it watches: it exits once every holder closed it."""
    return server._forkserver_pid, server._forkserver_alive_fd  # type: ignore[attr-defined]  # not in typeshed


@_private("multiprocessing.forkserver.ForkServer._forkserver_pid, _forkserver_alive_fd, _forkserver_address")
def forget_forkserver(server: multiprocessing.forkserver.ForkServer) -> None:
    """Make ``server`` forget its process (stopped, killed, or reaped by someone else), so
    that its next ``ensure_running()`` starts a new one; its socket file is removed. Closes
    no descriptor: the caller closes the alive pipe if it is still the server's."""
    import os

    address = server._forkserver_address  # type: ignore[attr-defined]  # not in typeshed
    if isinstance(address, str) and not address.startswith("\0"):
        with contextlib.suppress(OSError):
            os.unlink(address)
    server._forkserver_address = None  # type: ignore[attr-defined]  # not in typeshed
    server._forkserver_alive_fd = None  # type: ignore[attr-defined]  # not in typeshed
    server._forkserver_pid = None  # type: ignore[attr-defined]  # not in typeshed


@_private("multiprocessing.resource_tracker._resource_tracker._stop(), ._pid")
def stop_resource_tracker() -> None:
    """Stop multiprocessing's resource tracker process and wait for it (if it runs; one that
    someone else's ``os.wait`` reaped is forgotten, and the next user starts a new one).

    It is started for the fork server and would otherwise outlive its owner for a moment.
    Call it only when no process that uses it (server, ranks) is left.
    """
    import multiprocessing.resource_tracker

    tracker: Any = multiprocessing.resource_tracker._resource_tracker
    try:
        tracker._stop()
    except ChildProcessError:  # its pipe is closed already; its pid is no child of ours any more
        tracker._pid = None


@_private("multiprocessing.current_process()._config['tempdir']")
@contextlib.contextmanager
def multiprocessing_tempdir(path: str) -> Iterator[None]:
    """Make ``path`` multiprocessing's temp directory (where a starting fork server's socket
    goes) for the duration of the block, then what it was before (other users of
    multiprocessing in this process keep theirs)."""
    config = multiprocessing.current_process()._config  # type: ignore[attr-defined]  # not in typeshed
    missing = object()
    before = config.get("tempdir", missing)
    config["tempdir"] = path
    try:
        yield
    finally:
        if before is missing:
            config.pop("tempdir", None)
        else:
            config["tempdir"] = before


@_private("multiprocessing.util._run_finalizers(0)")
def run_multiprocessing_finalizers() -> None:
    """Run this process's multiprocessing finalizers that would run at a normal exit, such as
    unlinking the semaphores it created (a rank leaves with ``os._exit``; without this the
    resource tracker later warns about "leaked semaphore objects", e.g. tqdm's lock)."""
    import multiprocessing.util

    multiprocessing.util._run_finalizers(0)  # type: ignore[attr-defined]  # not in typeshed


@_private("multiprocessing.util.Finalize(None, callback, exitpriority=-100)")
def call_after_multiprocessing_exit(callback: Callable[[], None]) -> None:
    """Call ``callback`` at interpreter exit after multiprocessing's own exit work (its
    finalizers unlink this process's semaphores, which the resource tracker must still see)."""
    import multiprocessing.util

    multiprocessing.util.Finalize(None, callback, exitpriority=-100)


@_private("unittest.TestCase._testMethodName")
def test_method_name(test: unittest.TestCase) -> str:
    """The name of the test method a TestCase instance runs (unittest keeps it private)."""
    return test._testMethodName


test_method_name.__test__ = False  # type: ignore[attr-defined]  # pytest must not collect it where imported


@_private("multiprocessing.spawn.get_preparation_data()['init_main_from_path']")
def main_script_path() -> str | None:
    """The path of the script this process runs as ``__main__`` (``python FILE``), as
    multiprocessing tells its children to import it; None when ``__main__`` is not a file
    (``python -m``, ``-c``, an interactive session)."""
    import multiprocessing.spawn

    return multiprocessing.spawn.get_preparation_data("main").get("init_main_from_path")


@_private("multiprocessing.spawn.import_main_path() under current_process()._inheriting")
def import_main_script(path: str) -> None:
    """Import the script at ``path`` as multiprocessing does in a child: as ``__mp_main__``,
    also made ``sys.modules["__main__"]``, without running its ``if __name__ == "__main__"``
    block. A child forked from this process then finds its parent's main script imported.

    CPython 3.11's fork server means to do this for a ``"__main__"`` preload, but asks for
    the path under a key that ``get_preparation_data`` does not use, so it never does.
    """
    import multiprocessing.process
    import multiprocessing.spawn

    current = multiprocessing.process.current_process()
    current._inheriting = True  # type: ignore[attr-defined]  # what spawn's children set to import main
    try:
        multiprocessing.spawn.import_main_path(path)
    finally:
        del current._inheriting  # type: ignore[attr-defined]  # set just above


# -- torch ----------------------------------------------------------------------------------

# Modules the rank fork server imports so that ranks need not: torch._dynamo is imported lazily
# by DDP, replicate, FSDP and assert_close, and costs about 2 s per rank otherwise.
PRELOADED_PRIVATE_MODULES = ("torch._dynamo",)


@_private("torch.utils._triton.has_triton()")
def triton_has_backend() -> bool:
    """Whether triton imports and has a backend for this machine's device."""
    from torch.utils._triton import has_triton

    return bool(has_triton())


@_private("torch._C._distributed_c10d.FakeProcessGroup._create_internal, "
          "torch.distributed.Backend._plugins")
def register_fake_backend() -> None:
    """Register the ``fake`` process-group backend (no communication) unless it is registered.

    torch 2.13 lists ``fake`` in ``Backend.backend_list`` from the start, but can create it
    only once ``torch.testing._internal.distributed.fake_pg`` was imported (``torch._dynamo``
    imports it); until then ``init_process_group("fake")`` fails with "Unknown c10d backend
    type FAKE". Only the plugin table tells the two apart.
    """
    import torch.distributed as dist

    if "FAKE" in dist.Backend._plugins:
        return
    from torch._C._distributed_c10d import FakeProcessGroup

    def create(common_opts: Any, backend_opts: Any) -> Any:
        return FakeProcessGroup._create_internal(  # type: ignore[call-arg]  # the stub lacks the options
            common_opts.group_rank, common_opts.group_size, backend_opts)

    dist.Backend.register_backend("fake", create, extended_api=True,
                                  devices=["cpu", "cuda", "hpu", "xpu"])


@_private("DistributedDataParallel._active_ddp_module")
@contextlib.contextmanager
def active_ddp_module(module: Any) -> Iterator[None]:
    """Register ``module`` as DDP's active module for the block: what Dynamo's DDPOptimizer
    looks for to split a graph into one subgraph per gradient bucket."""
    from torch.nn.parallel import DistributedDataParallel

    previous = DistributedDataParallel._active_ddp_module
    DistributedDataParallel._active_ddp_module = module
    try:
        yield
    finally:
        DistributedDataParallel._active_ddp_module = previous


@_private("DistributedDataParallel._get_active_ddp_module()")
def get_active_ddp_module() -> Any:
    """The module registered as DDP's active module, or None."""
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel._get_active_ddp_module()


@_private("torch._dynamo.config.patch(...)")
def patch_dynamo_config(**changes: Any) -> contextlib.AbstractContextManager[Any]:
    """A context manager that sets Dynamo config values for its block."""
    import torch._dynamo.config

    return torch._dynamo.config.patch(**changes)


@_private("torch._dynamo.config.<name>")
def dynamo_config_value(name: str) -> Any:
    """The current value of one Dynamo config entry."""
    import torch._dynamo.config

    return getattr(torch._dynamo.config, name)


@_private("torch._dynamo.utils.counters.clear()")
def clear_dynamo_counters() -> None:
    """Clear Dynamo's counters (graph breaks, frames, DDPOptimizer splits...)."""
    import torch._dynamo.utils

    torch._dynamo.utils.counters.clear()


@_private("torch._dynamo.device_interface.CpuInterface.device")
@contextlib.contextmanager
def cpu_device_switch_disabled() -> Iterator[None]:
    """For the block, make the CPU device interface's ``device(index)`` a no-op context.

    Compiler collectives enter ``device(index)`` of the interface for the group's device;
    the CPU interface raises ``NotImplementedError`` there in torch 2.13.
    """
    from unittest import mock

    from torch._dynamo.device_interface import CpuInterface

    @contextlib.contextmanager
    def no_switch(index: int) -> Iterator[None]:
        yield

    with mock.patch.object(CpuInterface, "device", staticmethod(no_switch)):
        yield


@_private("torch.distributed.distributed_c10d._world.pg_map")
def live_process_groups() -> list[Any]:
    """Every process group torch currently keeps (the default group and its subgroups)."""
    import torch.distributed as dist

    return list(dist.distributed_c10d._world.pg_map)


@_private("torch._C._cuda_clearCublasWorkspaces (CUDA builds)")
def clear_accelerator_workspaces(device: str) -> None:
    """Free the cuBLAS workspaces torch keeps after a CUDA matmul, so that the memory still
    allocated on ``device`` is what a test holds (nothing to do on other devices)."""
    import torch

    if device.split(":")[0] == "cuda":
        torch._C._cuda_clearCublasWorkspaces()


@_private("torch._C._get_privateuse1_backend_name()")
def privateuse1_backend_name() -> str:
    """The name the PrivateUse1 device type goes by (``"privateuseone"`` until an out-of-tree
    backend renames it with ``torch.utils.rename_privateuse1_backend``)."""
    import torch

    return torch._C._get_privateuse1_backend_name()


@_private("DistributedDataParallel._get_ddp_logging_data()")
def ddp_logging_data(model: Any) -> dict[str, Any]:
    """What a DDP module's logger recorded: ``iteration``, and ``has_error``/``error`` once
    DDP raised an error it logs (an unused parameter, a reducer mismatch...)."""
    return dict(model._get_ddp_logging_data())


# -- DTensor tests (dtensor_bases/) ---------------------------------------------------------

@_private("torch.utils._pytree.tree_flatten")
def tree_flatten(tree: Any) -> tuple[list[Any], Any]:
    """The leaves of a nested structure (tuples, lists, dicts, namedtuples...) and its spec."""
    from torch.utils import _pytree

    return _pytree.tree_flatten(tree)


@_private("torch.utils._pytree.tree_unflatten")
def tree_unflatten(leaves: list[Any], spec: Any) -> Any:
    """The structure :func:`tree_flatten` described, rebuilt around new leaves."""
    from torch.utils import _pytree

    return _pytree.tree_unflatten(leaves, spec)


@_private("torch._is_functional_tensor")
def is_functional_tensor(tensor: Any) -> bool:
    """Whether ``tensor`` is a functionalization wrapper (DTensor cannot hold one)."""
    import torch

    return bool(torch._is_functional_tensor(tensor))


@_private("torch.distributed._local_tensor")
def local_tensor_api() -> Any:
    """The LocalTensor module (one process simulating every rank), or None when this torch
    has none. Its names used here: ``LocalTensor``, ``LocalTensorMode``, ``LocalIntNode``,
    ``maybe_disable_local_tensor_mode``, ``maybe_run_for_local_tensor``."""
    import importlib

    try:
        return importlib.import_module("torch.distributed._local_tensor")
    except ImportError:
        return None


@_private("torch.autograd._enable_record_function")
def set_record_function_enabled(enabled: bool) -> None:
    """Turn profiler ``record_function`` ranges on or off (LocalTensor tests turn them off)."""
    import torch

    torch.autograd._enable_record_function(enabled)


@_private("torch.distributed.tensor._random._rng_tracker")
def reset_dtensor_rng_tracker() -> None:
    """Forget DTensor's random-number tracker, so the next mesh makes a fresh one."""
    from torch.distributed.tensor import _random

    _random._rng_tracker = None


@_private("torch.distributed.tensor._dtensor_spec.ShardOrderEntry")
def shard_order_entry(tensor_dim: int, mesh_dims: tuple[int, ...]) -> Any:
    """One entry of a DTensor shard order: ``tensor_dim`` split over ``mesh_dims``, in order."""
    from torch.distributed.tensor._dtensor_spec import ShardOrderEntry

    return ShardOrderEntry(tensor_dim=tensor_dim, mesh_dims=tuple(mesh_dims))


@_private("DTensor._spec (.placements, .shard_order, .use_strided_shard_as_shard_order), "
          "torch.distributed.tensor._redistribute.redistribute_local_tensor")
def redistribute_to_shard_order(dtensor: Any, placements: tuple[Any, ...], shard_order: Any,
                                use_graph_based_transform: bool = True) -> Any:
    """``dtensor`` moved to ``placements`` sharded in ``shard_order`` (a tuple of
    :func:`shard_order_entry`, or None for the default order); ``dtensor`` itself when that is
    where it already is."""
    import copy

    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._redistribute import redistribute_local_tensor

    old_spec = dtensor._spec
    new_spec = copy.deepcopy(old_spec)
    new_spec.placements = tuple(placements)
    new_spec.shard_order = () if shard_order is None else shard_order
    if new_spec == old_spec:
        return dtensor
    local = redistribute_local_tensor(dtensor.to_local(), old_spec, new_spec,
                                      use_graph_based_transform=use_graph_based_transform)
    moved = DTensor.from_local(local, dtensor.device_mesh)
    moved._spec = copy.deepcopy(new_spec)
    return moved


@_private("DTensor._spec.use_strided_shard_as_shard_order, DTensorSpec.__post_init__")
def use_plain_shard_order(dtensor: Any) -> None:
    """Make ``dtensor``'s spec describe its shard order without ``_StridedShard`` placements."""
    spec = dtensor._spec
    spec.use_strided_shard_as_shard_order = False
    spec.__post_init__()


@_private("DeviceMesh._concatenate")
def concatenate_meshes(meshes: list[Any]) -> Any:
    """One mesh whose dimensions are those of ``meshes`` (submeshes of one root), in order."""
    from torch.distributed.device_mesh import DeviceMesh

    return DeviceMesh._concatenate(meshes)


@_private("ProcessGroup.group_desc 'mesh_<dim name>', as DeviceMesh._init_one_process_group describes its groups")
def made_by_device_mesh(group: Any) -> bool:
    """Whether a device mesh made ``group`` (for one of its dimensions)."""
    return str(getattr(group, "group_desc", "")).startswith("mesh_")


@_private("DeviceMesh._dim_group_names")
def device_mesh_group_names(mesh: Any) -> tuple[str, ...]:
    """The names of the process groups ``mesh`` holds (one per dimension; none on a rank
    outside it)."""
    return tuple(getattr(mesh, "_dim_group_names", ()))


@_private("torch.distributed.tensor.debug._clear_sharding_prop_cache, torch.distributed.tensor._redistribute"
          "._gen_transform_infos.cache_clear / clear_redistribute_planner_cache, "
          "torch.distributed.tensor._collective_utils.MeshTopoInfo.build_from_mesh.cache_clear")
def clear_dtensor_caches() -> None:
    """Empty DTensor's caches whose entries hold device meshes (sharding propagation, Python's
    and the C++ fast path's; redistribution plans; mesh topologies), if DTensor is imported. A
    cached result names the mesh it was computed on: a later mesh of the same layout would be
    handed the old one, and with it groups that may be destroyed since."""
    import sys

    if "torch.distributed.tensor" not in sys.modules:
        return
    from torch.distributed.tensor import _collective_utils, _redistribute
    from torch.distributed.tensor.debug import _clear_sharding_prop_cache

    _clear_sharding_prop_cache()
    _redistribute._gen_transform_infos.cache_clear()
    _redistribute.clear_redistribute_planner_cache()
    _collective_utils.MeshTopoInfo.build_from_mesh.cache_clear()


@_private("DTensor._op_dispatcher.sharding_propagator (op_strategy_funcs, op_to_schema_info), "
          "torch.distributed.tensor._ops.utils.register_op_strategy, "
          "torch.distributed.tensor.debug._clear_sharding_prop_cache")
@contextlib.contextmanager
def dtensor_op_strategy(op_overload: Any, strategy_func: Callable[..., Any],
                        schema_info: Any = None) -> Iterator[None]:
    """Inside the block, DTensor shards ``op_overload`` with ``strategy_func`` (registered as
    ``register_op_strategy`` registers one, with ``schema_info``); after it, the strategy and
    schema info the op had before (or none). The sharding cache is emptied on entering (else a
    decision cached before the block would bypass the new rule; upstream empties it only on
    leaving) and on leaving. An op that also has a single-dimension rule is sharded by that."""
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._ops.utils import register_op_strategy
    from torch.distributed.tensor.debug import _clear_sharding_prop_cache

    propagator = DTensor._op_dispatcher.sharding_propagator
    tables: tuple[dict[Any, Any], ...] = (propagator.op_strategy_funcs, propagator.op_to_schema_info)
    before = [table.pop(op_overload, None) for table in tables]
    _clear_sharding_prop_cache()
    try:
        register_op_strategy(op_overload, schema_info=schema_info)(strategy_func)
        yield
    finally:
        for table, old in zip(tables, before, strict=True):
            table.pop(op_overload, None)
            if old is not None:
                table[op_overload] = old
        _clear_sharding_prop_cache()


# -- FSDP tests (fsdp_bases/) ---------------------------------------------------------------

@_private("torch.distributed.fsdp._fully_shard._fsdp_param_group (module)")
def fsdp_param_group_module() -> Any:
    """The module of fully_shard's parameter groups: its globals ``foreach_all_gather`` and
    ``foreach_reduce`` are the collectives ``FSDPParamGroup`` calls, looked up at call time."""
    import importlib

    return importlib.import_module("torch.distributed.fsdp._fully_shard._fsdp_param_group")


@_private("torch.distributed.fsdp._fully_shard._fsdp_param_group.FSDPParamGroup")
def fsdp_param_group_class() -> type:
    """``FSDPParamGroup``: one fully_shard communication group; its methods ``unshard``,
    ``reshard`` and ``post_backward`` run on every forward and backward."""
    return fsdp_param_group_module().FSDPParamGroup


@_private("torch.distributed.fsdp._fully_shard._fsdp_param_group.RegisterPostBackwardFunction")
def fsdp_post_backward_function_class() -> type:
    """The autograd function whose ``backward`` runs fully_shard's post-backward hook."""
    return fsdp_param_group_module().RegisterPostBackwardFunction


@_private("ShardingStrategy._HYBRID_SHARD_ZERO2")
def fsdp_hybrid_sharding_strategies() -> frozenset[Any]:
    """FullyShardedDataParallel's hybrid strategies (which shard within a node and replicate
    across nodes, so take no single process group)."""
    from torch.distributed.fsdp import ShardingStrategy

    return frozenset({ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2})


@_private("torch.distributed._composable.checkpoint")
def composable_checkpoint() -> Callable[..., Any]:
    """The composable activation checkpointing API (``checkpoint(module)`` in place)."""
    from torch.distributed._composable import checkpoint

    return checkpoint


@_private("torch._inductor.config (its values read and set as attributes)")
def inductor_config() -> Any:
    """Inductor's config module: ``inductor_config().compile_threads`` reads a value, and
    assigning it sets the value for the whole process."""
    import torch._inductor.config

    return torch._inductor.config


@_private("torch.distributed._local_tensor.LocalIntNode._local_ints (via SymInt.node)")
def local_int_values(value: Any) -> dict[int, int]:
    """A LocalTensor SymInt's value on each simulated rank."""
    return dict(value.node._local_ints)


# -- the threaded world (thread_ranks/) ----------------------------------------------------------

@_private("torch.distributed.distributed_c10d._world, and the properties of its class _World "
          "(process_groups.c10d_world_per_thread.ThreadLocalWorld offers each of them)")
def c10d_world() -> Any:
    """The object torch.distributed keeps its process groups in (a ``_World``, or the
    thread-local world a threaded test installed)."""
    import torch.distributed as dist

    return dist.distributed_c10d._world


@_private("torch.distributed.distributed_c10d._world = ...")
def set_c10d_world(world: Any) -> None:
    """Make ``world`` the object torch.distributed keeps its process groups in (every c10d
    function reads the module attribute at call time)."""
    import torch.distributed as dist

    dist.distributed_c10d._world = world


@_private("torch._C._distributed_c10d._set_thread_isolation_mode")
def set_thread_isolated_group_registry(enabled: bool) -> None:
    """Make the C++ registry of process groups by name (what functional collectives resolve a
    group name in) per thread while ``enabled``, so rank threads can reuse group names."""
    import torch

    torch._C._distributed_c10d._set_thread_isolation_mode(enabled)  # type: ignore[attr-defined]  # not in torch's stubs


@_private("sys._current_frames()")
def thread_frames() -> dict[int, Any]:
    """The frame each running thread is executing, by thread ident."""
    import sys

    return sys._current_frames()


@_private("sys._getframe()")
def caller_frame(depth: int) -> Any:
    """The frame ``depth`` calls above the caller of this function (0: the caller's own)."""
    return sys._getframe(depth + 1)


@_private("ctypes.pythonapi.PyThreadState_SetAsyncExc")
def raise_in_thread(ident: int, exception: type[BaseException]) -> bool:
    """Make the thread ``ident`` raise ``exception`` at its next Python instruction (a thread
    blocked in C, e.g. ``time.sleep``, raises only once it returns). True if the thread exists."""
    import ctypes

    changed = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident),
                                                         ctypes.py_object(exception))
    if changed > 1:  # cannot happen for one ident; undo as CPython's documentation asks
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)
    return changed == 1


@_private("Work._source_rank() (dist.recv from any source asks its work)")
def answer_source_rank(work_class: type) -> type:
    """Class decorator for a Python ``dist.Work``: ``dist.recv(t)`` (from any source) learns the
    sender by calling the work's ``_source_rank()``; make it call the class's ``source_rank()``."""
    work_class._source_rank = lambda work: work.source_rank()  # type: ignore[attr-defined]  # patched onto any class
    return work_class


@_private("torch._inductor.compile_fx, torch._inductor.codecache.torch_key(), "
          "torch._inductor.cpu_vec_isa.pick_vec_isa()")
def warm_inductor_process_caches() -> None:
    """Do once what the first ``torch.compile`` with inductor in a fresh process does: import
    the compiler, hash torch's sources for the cache key and probe the CPU's vector
    instructions (a compile and a run of a small program). Both results are cached for the
    process, and so for every process forked from it."""
    import torch._inductor.compile_fx  # noqa: F401  # the import is the work
    from torch._inductor import codecache, cpu_vec_isa

    codecache.torch_key()
    cpu_vec_isa.pick_vec_isa()


@_private("the files of torch/testing/_internal/ in the installed torch (read, never imported)")
def shipped_suite_path(relative: str) -> str:
    """The path of the installed torch's ``torch/testing/_internal/<relative>`` (for example
    ``distributed/distributed_test.py``), found beside ``torch/__init__.py`` without importing
    the package it is in. Raises ``FileNotFoundError`` naming the torch version if this torch
    does not ship it."""
    import os

    import torch

    path = os.path.join(os.path.dirname(torch.__file__), "testing", "_internal", relative)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"torch {torch.__version__} does not ship "
                                f"torch/testing/_internal/{relative} (looked at {path})")
    return path


@_private("the text of the installed torch's torch/testing/_internal/common_utils.py (read, never imported)")
def harness_refuses_dotted_test_names() -> bool:
    """Whether the installed torch's own harness refuses a generated test name that contains
    ``"."`` (it defines ``validate_test_name`` and calls it on every parametrized or device-type
    name: torch 2.14.1 and 2.15.0 do, 2.13.0 does not). False if torch ships no harness."""
    import re

    try:
        with open(shipped_suite_path("common_utils.py"), encoding="utf-8") as source:
            text = source.read()
    except FileNotFoundError:
        return False
    return re.search(r"^def validate_test_name\(", text, re.M) is not None


@_private("torch.distributed._shard.sharded_tensor (ShardedTensor, its factories)")
def sharded_tensor_api() -> ModuleType:
    """The sharded-tensor API (``ShardedTensor``, ``rand``, ``ones``, ...): the subject of the
    sharded-tensor test bases, which torch keeps in a private package."""
    from torch.distributed._shard import sharded_tensor

    return sharded_tensor


@_private("torch.distributed._shard.sharding_spec (ChunkShardingSpec, EnumerableShardingSpec, ShardMetadata)")
def sharding_spec_api() -> ModuleType:
    """The sharding specs a sharded tensor is made by, from torch's private ``_shard`` package."""
    from torch.distributed._shard import sharding_spec

    return sharding_spec


@_private("torch.Tensor._make_wrapper_subclass(cls, size, strides=, storage_offset=, dtype=, device=, layout=, "
          "requires_grad=)")
def make_wrapper_subclass(cls: type, size: Any, **metadata: Any) -> Any:
    """A tensor of subclass ``cls`` with ``size`` and ``metadata`` but no storage of its own,
    for subclasses that keep their data in inner tensors."""
    import torch

    return torch.Tensor._make_wrapper_subclass(cls, size, **metadata)


@_private("torch.utils._python_dispatch.return_and_correct_aliasing(func, args, kwargs, out)")
def correct_aliasing(func: Any, args: Any, kwargs: Any, out: Any) -> Any:
    """``out`` of a wrapper subclass's ``__torch_dispatch__``, made to alias its inputs as
    ``func``'s schema says (views and in-place ops hand back the input wrapper)."""
    from torch.utils._python_dispatch import return_and_correct_aliasing

    return return_and_correct_aliasing(func, args, kwargs, out)


@_private("torch.distributed.rpc.TensorPipeRpcBackendOptions(_transports=...)")
def tensorpipe_options(transports: list[str] | None, **options: Any) -> Any:
    """TensorPipe RPC options limited to ``transports`` (None: TensorPipe's own choice)."""
    from torch.distributed import rpc

    return rpc.TensorPipeRpcBackendOptions(_transports=transports, **options)


@_private("torch.classes.dist_c10d.TCPStore(addr, port, world_size, is_master, timeout_ms)")
def jit_tcp_store(addr: str, port: int, world_size: int, is_master: bool, timeout_ms: int) -> Any:
    """The TorchScript class of a ``TCPStore`` (it takes the timeout in milliseconds)."""
    import torch

    return torch.classes.dist_c10d.TCPStore(addr, port, world_size, is_master, timeout_ms)


@_private("torch.distributed.fsdp.ShardingStrategy._HYBRID_SHARD_ZERO2")
def fsdp_unsharded_between_forward_and_backward() -> frozenset[Any]:
    """FullyShardedDataParallel's strategies that keep parameters unsharded from forward to
    backward (no reshard after forward)."""
    from torch.distributed.fsdp import ShardingStrategy

    return frozenset({ShardingStrategy.SHARD_GRAD_OP, ShardingStrategy._HYBRID_SHARD_ZERO2})


@_private("torch.get_device_module(device_type)._sleep(cycles)")
def device_sleep_kernel(device_type: str) -> Callable[[int], None]:
    """The busy-wait kernel of an accelerator type (``torch.cuda._sleep``): called with a
    number of cycles, it queues a kernel that spins that long on the current stream."""
    import torch

    sleep: Callable[[int], None] = torch.get_device_module(device_type)._sleep
    return sleep


@_private("torch.distributed.checkpoint._extension (StreamTransformExtension, ExtensionRegistry)")
def checkpoint_extension_api() -> ModuleType:
    """Distributed checkpoint's extensions: stream transforms a ``FileSystemWriter`` applies
    (``_extensions=``) and the registry a ``FileSystemReader`` finds them in
    (``_extension_registry=``); torch keeps them in a private module."""
    from torch.distributed.checkpoint import _extension

    return _extension


@_private("torch.distributed.rpc._testing (importing it registers the FAULTY_TENSORPIPE RPC backend)")
def register_faulty_rpc_backend() -> None:
    """Register torch's faulty TensorPipe RPC agent (``rpc.BackendType.FAULTY_TENSORPIPE``), as
    torch's own RPC fixture does by importing its private testing module."""
    import torch.distributed.rpc._testing  # noqa: F401  # the import registers the backend


@_private("torch.distributed.rpc._rref_context_get_debug_info() (num_owner_rrefs, num_forks, "
          "num_pending_futures, num_pending_users)")
def rref_context_debug_info() -> dict[str, str]:
    """This process's RRef bookkeeping, as RPC reports it for debugging: counts of owner RRefs,
    forks, and futures and users still pending (each as a string)."""
    from torch.distributed import rpc

    return dict(rpc._rref_context_get_debug_info())


@_private("torch.distributed.rpc.api._ignore_rref_leak")
def report_rref_leaks() -> None:
    """Make RPC's shutdown raise on leaked RRefs instead of ignoring them (torch's default)."""
    from torch.distributed.rpc import api

    api._ignore_rref_leak = False


@_private("torchcomms._comms._BackendWrapper (through torch.distributed.distributed_c10d), "
          "torch.distributed.distributed_c10d._register_pg_in_world, "
          "ProcessGroup._register_backend/_set_default_backend/_set_group_name")
def torchcomms_process_group(comm: Any, store: Any, file_store: Any, group_name: str, backend: str,
                             world_size: int) -> Any:
    """A process group whose NCCL-typed backend is the torchcomms communicator ``comm``, named
    ``group_name`` and registered in c10d's world (so name lookups find it)."""
    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d

    name = c10d.GroupName(group_name)
    group = dist.ProcessGroup(store, comm.get_rank(), comm.get_size())
    nccl = dist.ProcessGroup.BackendType.NCCL
    group._register_backend(comm.get_device(), nccl, c10d._BackendWrapper(comm))
    group._set_default_backend(nccl)
    group._set_group_name(name)
    c10d._register_pg_in_world(group, backend_name=backend, store=file_store, group_name=name,
                               backend_config=backend, rank_mapping={r: r for r in range(world_size)})
    return group


# The functions of functional collectives that make a collective or point-to-point call.
_FUNCTIONAL_COLLECTIVES = ("broadcast", "all_reduce", "all_reduce_coalesced", "all_gather_tensor",
                           "all_gather_tensor_autograd", "all_gather_single", "all_gather_single_autograd",
                           "all_gather_single_coalesced", "all_gather_into_tensor_coalesced", "reduce_scatter_tensor",
                           "reduce_scatter_tensor_autograd", "reduce_scatter_single", "reduce_scatter_single_autograd",
                           "reduce_scatter_single_coalesced", "reduce_scatter_tensor_coalesced", "all_to_all_single",
                           "all_to_all_single_autograd", "permute_tensor", "all_gather_tensor_inplace",
                           "reduce_scatter_tensor_inplace", "all_reduce_inplace", "all_to_all_inplace",
                           "all_gather_inplace", "isend_inplace", "irecv_inplace", "batch_p2p_ops_inplace")


_FUNCTIONAL_OP_NAMESPACES = ("_c10d_functional", "_c10d_functional_autograd")


@_private("torch.distributed._functional_collectives.<function> and the names its code refers to")
def functional_collective_functions() -> dict[str, Callable[..., Any]]:
    """The functions of ``torch.distributed._functional_collectives`` that make a collective
    call themselves (their code calls an op of ``torch.ops._c10d_functional``), by name. The
    others (``all_gather_tensor``, ``all_reduce_inplace``, ``permute_tensor``...) call one of
    these through the module, so a wrapper around these sees every call once, and a warning the
    others give (``FutureWarning``: deprecated) still points at their caller."""
    import inspect

    import torch.distributed._functional_collectives as funcol

    functions = {name: getattr(funcol, name) for name in _FUNCTIONAL_COLLECTIVES if hasattr(funcol, name)}
    return {name: function for name, function in functions.items()  # (seen through a wrapper: the ledger's)
            if any(namespace in inspect.unwrap(function).__code__.co_names for namespace in _FUNCTIONAL_OP_NAMESPACES)}


@_private("torch.distributed._functional_collectives.<function> (replaced by a wrapper that calls it)")
def set_functional_collective_function(name: str, function: Callable[..., Any]) -> None:
    """Make ``torch.distributed._functional_collectives.<name>`` ``function`` (its callers,
    DTensor's among them, look it up on the module at each call). The ops of ``torch.ops``
    stay as they are: dispatch modes such as ``CommDebugMode`` know them by identity."""
    import torch.distributed._functional_collectives as funcol

    setattr(funcol, name, function)


@_private("torch.distributed.distributed_c10d._resolve_group_name_by_ranks_and_tag")
def functional_group_name(group: Any) -> str:
    """The name of the group a functional collective is given (a group, its name, a device
    mesh, a mesh and one of its dimensions, or a list of ranks), found as functional collectives
    find it but without their deprecation warning for a list of ranks (the code under test
    must not see one more warning) and without an op."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.distributed_c10d import _resolve_group_name_by_ranks_and_tag

    if isinstance(group, str):
        return group
    if isinstance(group, dist.ProcessGroup):
        return str(group.group_name)
    if isinstance(group, DeviceMesh):
        return str(group.get_group().group_name)
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return str(group[0].get_group(group[1]).group_name)
    return str(_resolve_group_name_by_ranks_and_tag(group, ""))


# A code object's file name that warnings skip as they skip importlib's own frames (it holds
# "importlib" and "_bootstrap"); the "<" makes it a made-up file to tracebacks and linecache.
HIDDEN_FROM_WARNINGS = "<torch_testing_ext: skipped by warnings as importlib._bootstrap frames are>"


@_private("warnings.warn(stacklevel=n) skips frames whose file name holds 'importlib' and '_bootstrap'")
def hidden_from_warnings(function: _F) -> _F:
    """A copy of ``function`` (a wrapper) whose frames ``warnings.warn(..., stacklevel=n)``
    skips when it counts its levels, as it skips importlib's: a warning raised in what the
    wrapper calls is attributed to the wrapper's caller, as if the wrapper were not there."""
    import types

    code = function.__code__.replace(co_filename=HIDDEN_FROM_WARNINGS)
    copy = types.FunctionType(code, function.__globals__, function.__name__, function.__defaults__,
                              function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__dict__.update(function.__dict__)  # functools.wraps' __wrapped__ among them
    for attribute in ("__qualname__", "__doc__", "__module__", "__annotations__"):
        setattr(copy, attribute, getattr(function, attribute))
    return copy  # type: ignore[return-value]  # the same function, its code's file name aside


@_private("torch._C._is_torch_function_mode_enabled")
def torch_function_mode_check() -> Callable[[], bool]:
    """A function that says whether a ``TorchFunctionMode`` is active (it would see a
    tensor's ``.shape`` read): torch's own, for callers on a hot path."""
    import torch

    return torch._C._is_torch_function_mode_enabled


@_private("torch._C.DisableTorchFunction")
def torch_function_disabled() -> contextlib.AbstractContextManager[Any]:
    """A block in which no ``TorchFunctionMode`` nor tensor subclass's ``__torch_function__``
    runs (to read a tensor's metadata without the test's modes seeing it)."""
    import torch

    return torch._C.DisableTorchFunction()


@_private("torch.ops._c10d_functional (the functional collectives' registered ops, and wait_tensor)")
def functional_collective_ops() -> Any:
    """The namespace of the functional collectives' ops (``all_reduce(tensor, "sum", group_name)``,
    ``wait_tensor``...), as compiled code calls them: the conformance kit checks a backend
    through them."""
    import torch

    return torch.ops._c10d_functional


@_private("torch._C._DisableTorchDispatch")
def torch_dispatch_disabled() -> contextlib.AbstractContextManager[Any]:
    """A block in which no ``TorchDispatchMode`` (nor a tensor subclass's ``__torch_dispatch__``)
    runs: a copy of a plain tensor made in it is not seen by the test's dispatch modes."""
    import torch

    return torch._C._DisableTorchDispatch()


@_private("torch.distributed._functional_collectives.AsyncCollectiveTensor, its wait()")
def async_collective_result(tensor: Any) -> Any:
    """The plain tensor an ``AsyncCollectiveTensor`` stands for (the result of a functional
    collective, as tensor parallel modules return), waited on; None for any other tensor. It
    leaves the wrapper as it was: the test's own first use of it still waits (at no cost)."""
    module = sys.modules.get("torch.distributed._functional_collectives")
    if module is None or type(tensor) is not module.AsyncCollectiveTensor:
        return None  # (a module never imported made no such tensor)
    return tensor.wait()


@_private("torch._C._dynamo.eval_frame.set_code_exec_strategy, _FrameExecStrategy, _FrameAction")
def never_compile_frames(code: Any) -> None:
    """Make ``torch.compile`` run frames of ``code``, and what they call, as they are, never
    compiling them as frames of their own (tracing through a call to them is unchanged).
    Through torch's C extension: importing ``torch._dynamo`` would cost a second or two."""
    from torch._C._dynamo.eval_frame import _FrameAction, _FrameExecStrategy, set_code_exec_strategy

    set_code_exec_strategy(code, _FrameExecStrategy(_FrameAction.SKIP, _FrameAction.SKIP))


@_private("torch.distributed.distributed_c10d._resolve_process_group")
def group_ranks_by_name(name: str) -> tuple[int, ...]:
    """The global ranks of the process group registered as ``name`` (functional collectives
    name their group)."""
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group

    return tuple(dist.get_process_group_ranks(_resolve_process_group(name)))  # type: ignore[arg-type]  # GroupName is a str


@_private("torch.ops.mkldnn._is_mkldnn_bf16_supported()")
def mkldnn_bf16_supported() -> bool:
    """Whether oneDNN computes bfloat16 on this CPU (quantized bf16 tests need it)."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


@_private("torch._dynamo.is_dynamo_supported()")
def dynamo_supported() -> bool:
    """Whether Dynamo runs on this platform and Python (it imports ``torch._dynamo``)."""
    import torch._dynamo

    return bool(torch._dynamo.is_dynamo_supported())


@_private("torch._dynamo.is_inductor_supported()")
def inductor_supported() -> bool:
    """Whether Inductor runs on this platform and Python (it imports ``torch._dynamo``)."""
    import torch._dynamo

    return bool(torch._dynamo.is_inductor_supported())


@_private("torch._C.has_lapack (whether this torch was built with LAPACK)")
def built_with_lapack() -> bool:
    """Whether this torch was built with LAPACK (CPU linear algebra)."""
    import torch

    return bool(torch._C.has_lapack)


@_private("torch._C.has_spectral (whether this torch was built with an FFT library)")
def built_with_spectral() -> bool:
    """Whether this torch was built with FFT support on the CPU."""
    import torch

    return bool(torch._C.has_spectral)


@_private("torch._native.dsl_registry.dsl_registry.is_dsl_available (the native-kernel DSLs, Triton and CuTeDSL)")
def dsl_available(name: str) -> bool:
    """Whether the kernel DSL ``name`` (``"triton"``, ``"cutedsl"``) is available to torch's
    native ops; False where this torch has no DSL registry."""
    try:
        from torch._native.dsl_registry import dsl_registry
    except ImportError:
        return False
    return bool(dsl_registry.is_dsl_available(name))
