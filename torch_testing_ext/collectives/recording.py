"""Record every collective and point-to-point call of a rank's test in its ledger.

:func:`install` wraps, once per process, the collective functions of ``torch.distributed``
(``all_reduce``, ``barrier``, ``send``... in both ``torch.distributed`` and
``torch.distributed.distributed_c10d``) and the ops of ``torch.ops._c10d_functional``, which
functional collectives and DTensor call (``_torch_private.functional_collective_ops``). A
wrapper costs one attribute check when nothing records; while a rank's test runs
(:func:`begin` ... :func:`end`, per process or, for a rank thread, per thread) it appends a
:class:`~torch_testing_ext.ranks.collective_ledger.Call` (the call's number in its group, op,
group, what this rank contributed, the first frame of the user's code) before the call goes to
the backend, and an armed fault (``collectives.faults``) may stop it there. Calls made inside a
recorded call (``all_gather_object`` gathering tensors) are the outer call's; calls made while
``torch.compile`` traces are not calls yet. ``TORCH_TESTING_EXT_COLLECTIVES=off`` records
nothing.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist

from .._torch_private import (
    caller_frame,
    functional_collective_ops,
    group_ranks_by_name,
    never_compile_frames,
    set_functional_collective_op,
)
from ..ranks import settings
from ..ranks.collective_ledger import Call, Ledger, LedgerFile

__all__ = ["Recorder", "install", "begin", "end", "current_recorder", "current_calls", "recording_enabled",
           "C10D_OPS", "P2P_OPS"]

__unittest = True

# The torch.distributed functions recorded, and the argument holding what a rank contributes.
C10D_OPS = {
    "all_reduce": "tensor", "all_reduce_coalesced": "tensors", "broadcast": "tensor", "reduce": "tensor",
    "all_gather": "tensor", "all_gather_into_tensor": "input_tensor", "all_gather_coalesced": "input_tensor_list",
    "reduce_scatter": "input_list", "reduce_scatter_tensor": "input", "all_to_all": "input_tensor_list",
    "all_to_all_single": "input", "gather": "tensor", "scatter": "tensor", "barrier": None,
    "monitored_barrier": None, "all_gather_object": None, "broadcast_object_list": None, "gather_object": None,
    "scatter_object_list": None, "send": "tensor", "recv": "tensor", "isend": "tensor", "irecv": "tensor",
    "batch_isend_irecv": None, "send_object_list": None, "recv_object_list": None,
}
P2P_OPS = frozenset({"send", "recv", "isend", "irecv", "batch_isend_irecv", "send_object_list", "recv_object_list",
                     "batch_p2p_ops"})

_installed = False
_install_lock = threading.Lock()
_thread = threading.local()  # .recorder: a rank thread's; .busy: inside a recorded call
_process_recorder: Recorder | None = None
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_internal_files: dict[str, bool] = {}


def recording_enabled() -> bool:
    """Whether ``TORCH_TESTING_EXT_COLLECTIVES`` asks for recording (``record``, the default)."""
    return settings.COLLECTIVES.get() == "record"


class Recorder:
    """The ledger of one rank's test as it is made, and the faults armed for it."""

    def __init__(self, rank: int, path: str | None, lockstep: bool, faults: Sequence[Any] = ()) -> None:
        self.ledger = Ledger(rank, lockstep=lockstep)
        self.faults = list(faults)
        self._sink = LedgerFile(path, rank, lockstep) if path else None
        self._seq: dict[str, int] = {}
        self._groups: dict[Any, tuple[str, tuple[int, ...]]] = {}

    def group(self, group: Any) -> tuple[str, tuple[int, ...]]:
        """The name and global ranks of a process group (or of a group name)."""
        # Keyed by the group itself, which the cache keeps alive for the test: a destroyed
        # group's id could come back as a new group's.
        known = self._groups.get(group)
        if known is None:
            known = self._groups[group] = _group_facts(group)
        return known

    def record(self, op: str, group: Any, tensors: str, site: str, note: str = "") -> Call:
        """Append one call to the ledger (and its file)."""
        name, ranks = self.group(group)
        seq = self._seq[name] = self._seq.get(name, 0) + 1
        call = Call(seq, op, name, ranks, tensors, site, op not in P2P_OPS, note)
        if self.faults:
            for fault in self.faults:
                call = fault.on_call(call)
        self.ledger.calls.append(call)
        if self._sink is not None:
            self._sink.write(call)
        if self.faults:
            for fault in self.faults:
                fault.act(call)
        return call

    def close(self) -> Ledger:
        if self._sink is not None:
            self._sink.close()
            self._sink = None
        return self.ledger


def _group_facts(group: Any) -> tuple[str, tuple[int, ...]]:
    """A group's name and global ranks; for an object c10d does not know as a group (a bare
    backend that old code passes), its type's name and no ranks: still the same on every rank."""
    try:
        if isinstance(group, str):
            return group, group_ranks_by_name(group)
        return str(group.group_name), tuple(dist.get_process_group_ranks(group))
    except Exception:  # whatever the group is, the call goes on
        return (group if isinstance(group, str) else type(group).__name__), ()


def current_recorder() -> Recorder | None:
    """The recorder of the rank the calling thread runs as, if a test is being recorded."""
    return getattr(_thread, "recorder", None) or _process_recorder


def current_calls() -> list[Call]:
    """The calls this rank's test has made so far (empty when nothing records)."""
    recorder = current_recorder()
    return list(recorder.ledger.calls) if recorder is not None else []


def begin(rank: int, path: str | None = None, lockstep: bool = True, faults: Sequence[Any] = (),
          thread: bool = False) -> Recorder | None:
    """Start recording this rank's test (for the calling thread only with ``thread``); None
    when recording is off. ``path``: the file the ledger is also written to as it grows."""
    global _process_recorder
    if not recording_enabled():
        return None
    install()
    recorder = Recorder(rank, path, lockstep, faults)
    if thread:
        _thread.recorder = recorder
    else:
        _process_recorder = recorder
    return recorder


def end(thread: bool = False) -> Ledger | None:
    """Stop recording this rank's test; its ledger (None if nothing was recorded)."""
    global _process_recorder
    if thread:
        recorder, _thread.recorder = getattr(_thread, "recorder", None), None
    else:
        recorder, _process_recorder = _process_recorder, None
    return None if recorder is None else recorder.close()


def _is_internal(filename: str) -> bool:
    known = _internal_files.get(filename)
    if known is None:
        path = os.path.abspath(filename)
        known = _internal_files[filename] = (filename.startswith("<") or path.startswith(_TORCH_DIR)
                                             or path.startswith(_PACKAGE_DIR))
    return known


def user_site() -> str:
    """``file.py:line`` of the first frame above the wrapper that is neither torch's nor ours."""
    frame = caller_frame(2)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


_DTYPE_NAMES: dict[torch.dtype, str] = {}


def describe_tensors(value: Any) -> str:
    """``float32[4]``; a list of tensors ``float32[2], float32[2]``; "" for anything else."""
    if isinstance(value, torch.Tensor):
        dtype = value.dtype
        name = _DTYPE_NAMES.get(dtype)
        if name is None:
            name = _DTYPE_NAMES[dtype] = str(dtype).removeprefix("torch.")
        return f"{name}{list(value.shape)}"
    if isinstance(value, (list, tuple)):
        return ", ".join(filter(None, (describe_tensors(item) for item in value)))
    return ""


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], index: int | None, name: str | None) -> Any:
    if name is None:
        return None
    if name in kwargs:
        return kwargs[name]
    return args[index] if index is not None and index < len(args) else None


def _wrap_c10d(op: str, original: Callable[..., Any], contribution: str | None) -> Callable[..., Any]:
    names = list(inspect.signature(original).parameters)
    group_index = names.index("group") if "group" in names else None
    tensor_index = names.index(contribution) if contribution in names else None

    @functools.wraps(original)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        if torch.compiler.is_compiling():  # first: what follows would break Dynamo's graph
            return original(*args, **kwargs)
        recorder = current_recorder()
        if recorder is None or getattr(_thread, "busy", False):
            return original(*args, **kwargs)
        _thread.busy = True  # inside a recorded call (this thread's): what it calls is part of it
        try:
            group = _argument(args, kwargs, group_index, "group") or dist.group.WORLD
            tensors = describe_tensors(_argument(args, kwargs, tensor_index, contribution))
            recorder.record(op, group, tensors, user_site())
            return original(*args, **kwargs)
        finally:
            _thread.busy = False

    return recorded


class _RecordedOp:
    """An op of ``torch.ops._c10d_functional`` that records its calls; its overloads
    (``.default``) and everything else are the op's own."""

    def __init__(self, name: str, op: Any) -> None:
        self._name = name
        self._op = op

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._op, attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if torch.compiler.is_compiling():  # first: what follows would break Dynamo's graph
            return self._op(*args, **kwargs)
        recorder = current_recorder()
        if recorder is None or getattr(_thread, "busy", False):
            return self._op(*args, **kwargs)
        _thread.busy = True
        try:
            group = kwargs.get("group_name", args[-1] if args else None)
            if isinstance(group, str):
                recorder.record(self._name, group, describe_tensors(args[0] if args else None), user_site(),
                                note="functional")
            return self._op(*args, **kwargs)
        finally:
            _thread.busy = False


def install() -> None:
    """Wrap the collective functions and ops of this process, once."""
    global _installed
    with _install_lock:
        if _installed:
            return
        c10d = dist.distributed_c10d
        for op, contribution in C10D_OPS.items():
            original = getattr(c10d, op, None)
            if original is None:
                continue
            wrapper = _wrap_c10d(op, original, contribution)
            setattr(c10d, op, wrapper)
            if getattr(dist, op, None) is original:
                setattr(dist, op, wrapper)
        for name, op in functional_collective_ops().items():
            set_functional_collective_op(name, _RecordedOp(name, op))
        # Called from code torch.compile runs eagerly (FSDP1's hooks), a wrapper's frame would be
        # compiled as a frame of its own: one more graph. Traced through, it is inlined as before.
        never_compile_frames(wrapper.__code__)  # every c10d wrapper shares this code
        never_compile_frames(_RecordedOp.__call__.__code__)
        _installed = True
