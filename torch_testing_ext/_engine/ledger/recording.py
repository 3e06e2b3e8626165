"""Record every collective and point-to-point call of a rank's test in its ledger.

:func:`install` wraps, once per process, the collective functions of ``torch.distributed``
(``all_reduce``, ``barrier``, ``send``... in both ``torch.distributed`` and
``torch.distributed.distributed_c10d``) and of functional collectives
(``torch.distributed._functional_collectives``, which DTensor calls: those that call an op
themselves, ``all_reduce``, ``all_gather_single``...; the others, ``all_gather_tensor`` and
the like, call one of these). While a rank's test runs (:func:`begin` ... :func:`end`, per process or,
for a rank thread, per thread) a wrapper notes the call (op, group, what this rank
contributed, reduce op, root, async or not, the first frame of the user's code) before it goes
to the backend, and an armed fault (``ledger.faults``) may stop it there. Calls made
inside a recorded call (``all_gather_object`` gathering tensors) are the outer call's; calls
made while ``torch.compile`` traces are not calls yet. ``TORCH_TESTING_EXT_COLLECTIVES=off``
records nothing.

Recording is invisible to the code under test: the ops of ``torch.ops`` stay torch's own (so
``CommDebugMode`` and other dispatch modes count what they always count), a wrapper calls no
torch op and reads tensors' shapes with torch functions disabled (no ``TorchFunctionMode``
sees it), ``torch.compile`` never compiles a wrapper as a frame of its own, and tracing
through one gives the graph the function itself gives. It is also cheap: a call made before
(same op, group, shapes, arguments and line) costs a dictionary lookup and a word in the
ledger's memory-mapped file; only a new one is described and written out.
"""

from __future__ import annotations

import array
import dataclasses
import functools
import inspect
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh

from .._torch_private import (
    caller_frame,
    functional_collective_functions,
    functional_group_name,
    group_ranks_by_name,
    hidden_from_warnings,
    never_compile_frames,
    set_functional_collective_function,
    torch_function_disabled,
    torch_function_mode_check,
)
from ..worlds import settings
from .collective_ledger import Call, Ledger, LedgerLog, number_calls

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
                     "batch_p2p_ops", "isend_inplace", "irecv_inplace", "batch_p2p_ops_inplace"})
# The arguments that decide a call's result besides the tensors, by their names in torch's
# signatures: the reduce op (c10d's "op", functional collectives' "reduceOp"), the root.
_REDUCE_OP_ARGUMENTS = ("op", "reduceOp")
_ROOT_ARGUMENTS = ("src", "dst", "group_src", "group_dst")
_NOT_GIVEN = object()



class _ThreadState(threading.local):
    """What the calling thread records: a rank thread's own recorder, and whether it is inside
    a recorded call. (Class defaults: reading an unset thread-local attribute is slow.)"""

    recorder: Recorder | None = None
    busy = False


_installed = False
_install_lock = threading.Lock()
_thread = _ThreadState()
_process_recorder: Recorder | None = None
_mode_active = torch_function_mode_check()
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
# Torch's own test suites (run here by _engine.distributed_bases.shipped_suites) are tests.
_TORCH_TESTS_DIR = os.path.join(_TORCH_DIR, "testing", "_internal") + os.sep
_PACKAGE_DIR = os.path.abspath(os.path.join(__file__, "..", "..", "..")) + os.sep  # torch_testing_ext/
_internal_files: dict[str, bool] = {}  # by file name: bounded by the files a process runs


def recording_enabled() -> bool:
    """Whether ``TORCH_TESTING_EXT_COLLECTIVES`` asks for recording (``record``, the default)."""
    return settings.COLLECTIVES.get() == "record"


class Recorder:
    """The ledger of one rank's test as it is made, and the faults armed for it.

    Each distinct call (:meth:`record`'s key: op, group, contribution, reduce op, root, async,
    code and line) is described once, as an entry; the ledger is the order of entries.
    """

    def __init__(self, rank: int, path: str | None, lockstep: bool, faults: Sequence[Any] = ()) -> None:
        self.rank = rank
        self.lockstep = lockstep
        self.faults = list(faults)
        self._entries: list[Call] = []
        self._index: dict[tuple[Any, ...], int] = {}
        self._order = array.array("I")
        self._log = LedgerLog(path, rank, lockstep) if path else None

    @property
    def ledger(self) -> Ledger:
        """The calls so far (made on demand: another thread may read a stuck rank's)."""
        return Ledger(self.rank, number_calls(self._entries, self._order[:]), self.lockstep)

    def record(self, key: tuple[Any, ...]) -> None:
        """Note one call: ``key`` is (op, functional or not, group, contribution, reduce op,
        root, async, code, line)."""
        fired = [fault for fault in self.faults if fault.fires_on(key[0])] if self.faults else None
        if fired:
            key = (*key, ", ".join(f"fault: {fault.fault.action}" for fault in fired),
                   all(fault.fault.action == "delay" for fault in fired))
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = self._describe(key)
        self._order.append(index)
        if self._log is not None:
            self._log.add_call(index)
        if fired:
            for fault in fired:
                fault.act()

    def _describe(self, key: tuple[Any, ...]) -> int:
        op, functional, group, contribution, reduce_op, root, async_op, code, line, *fault = key
        name, ranks = self.group(group)
        note = ", ".join(filter(None, ["functional" if functional else "", *fault[:1]]))
        compared = op not in P2P_OPS and (not fault or bool(fault[1]))
        entry = Call(0, op, name, ranks, _describe_contribution(contribution),
                     f"{os.path.basename(code.co_filename)}:{line}" if code is not None else "?",
                     compared, note, _describe_reduce_op(reduce_op), _describe_root(root), bool(async_op))
        self._entries.append(entry)
        if self._log is not None:
            self._log.add_entry(entry)
        return len(self._entries) - 1

    def group(self, group: Any) -> tuple[str, tuple[int, ...]]:
        """The name and global ranks of a process group (None: the default group; or a group
        name)."""
        return _group_facts(dist.group.WORLD if group is None else group)

    def close(self) -> Ledger:
        if self._log is not None:
            self._log.close()
            self._log = None
        return self.ledger


def _group_facts(group: Any) -> tuple[str, tuple[int, ...]]:
    """A group's name and global ranks (a group, its name, or what a functional collective is
    given: a device mesh, a mesh and a dimension, ranks); for an object c10d does not know as a
    group (a bare backend that old code passes), its type's name and no ranks: still the same
    on every rank."""
    try:
        if isinstance(group, (str, tuple, DeviceMesh)):
            name = functional_group_name(_as_given(group))
            return name, group_ranks_by_name(name)
        return str(group.group_name), tuple(dist.get_process_group_ranks(group))
    except Exception:  # whatever the group is, the call goes on
        return (group if isinstance(group, str) else type(group).__name__), ()


def _describe_contribution(contribution: Any) -> str:
    """``float32[4]``, ``float32[2], float32[2]`` or "" for what :func:`_contribution` took."""
    if contribution is None:
        return ""
    if isinstance(contribution, tuple) and len(contribution) == 2 and isinstance(contribution[1], torch.dtype):
        shape, dtype = contribution
        return f"{str(dtype).removeprefix('torch.')}{list(shape)}"
    return ", ".join(filter(None, (_describe_contribution(item) for item in contribution)))


def _describe_reduce_op(reduce_op: Any) -> str:
    """``SUM``, ``AVG``, ``PREMUL_SUM(0.5)``... for c10d's ``ReduceOp.SUM``, a ``ReduceOp``
    object, or a functional collective's ``"sum"``."""
    if reduce_op is None:
        return ""
    if isinstance(reduce_op, str):
        return reduce_op.upper()
    inner = getattr(reduce_op, "op", reduce_op)  # a ReduceOp object holds its RedOpType
    name = getattr(inner, "name", None)
    if not isinstance(name, str):
        return type(reduce_op).__name__
    try:
        factor = reduce_op.factor if inner is not reduce_op and name == "PREMUL_SUM" else None
    except Exception:  # a factor this torch does not show
        factor = None
    return name if factor is None else f"{name}({factor})"


def _reduce_op_key(reduce_op: Any) -> Any:
    """What a call's key holds of its reduce op: the op as given, or for a ``ReduceOp`` object
    (equal to every other of its kind, whatever its factor) its description."""
    return _describe_reduce_op(reduce_op) if type(reduce_op) is dist.ReduceOp else reduce_op  # (not the enum)


def _frozen(group: Any) -> Any:
    """A functional collective's group in a hashable form: a list of ranks (or of lists of
    ranks) as tuples; anything else as given."""
    return tuple(map(_frozen, group)) if type(group) is list else group


def _as_given(group: Any) -> Any:
    """The inverse of :func:`_frozen` for what :func:`functional_group_name` takes."""
    if type(group) is tuple and not (len(group) == 2 and isinstance(group[0], DeviceMesh)):
        return [_as_given(item) for item in group]
    return group


def _describe_root(root: Any) -> str:
    return "" if root is None else f"{root[0]}={root[1]}"


def _contribution(value: Any) -> Any:
    """What a rank contributes, in a hashable form: (shape, dtype) of a tensor, a tuple of those
    for a list of tensors, else None. Read with torch functions disabled: a
    ``TorchFunctionMode`` of the test, or a tensor subclass's ``__torch_function__``, sees
    nothing of it."""
    if type(value) is torch.Tensor and not _mode_active():
        return value.shape, value.dtype
    if isinstance(value, torch.Tensor):
        with torch_function_disabled():
            return value.shape, value.dtype
    if isinstance(value, (list, tuple)):
        return tuple(item for item in map(_contribution, value) if item is not None)
    return None


def current_recorder() -> Recorder | None:
    """The recorder of the rank the calling thread runs as, if a test is being recorded."""
    return _thread.recorder or _process_recorder


def current_calls() -> list[Call]:
    """The calls this rank's test has made so far (empty when nothing records)."""
    recorder = current_recorder()
    return recorder.ledger.calls if recorder is not None else []


def begin(rank: int, path: str | None = None, lockstep: bool = True, faults: Sequence[Any] = (),
          thread: bool = False) -> Recorder | None:
    """Start recording this rank's test (for the calling thread only with ``thread``); None
    when recording is off. ``path``: where the ledger is also kept as it grows."""
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
        recorder, _thread.recorder = _thread.recorder, None
    else:
        recorder, _process_recorder = _process_recorder, None
    return None if recorder is None else recorder.close()


def _is_internal(filename: str) -> bool:
    """Whether ``filename`` is torch's or ours (or made up: ``<string>``), not the user's; torch's
    test suites (``torch/testing/_internal/``) are the user's."""
    path = os.path.abspath(filename)
    torch_not_tests = path.startswith(_TORCH_DIR) and not path.startswith(_TORCH_TESTS_DIR)
    known = _internal_files[filename] = (filename.startswith("<") or torch_not_tests
                                         or path.startswith(_PACKAGE_DIR))
    return known


def _user_site() -> tuple[Any, int]:
    """The code and line of the first frame above the wrapper that is neither torch's nor ours."""
    frame = caller_frame(2)
    while frame is not None:
        code = frame.f_code
        internal = _internal_files.get(code.co_filename)
        if internal is None:
            internal = _is_internal(code.co_filename)
        if not internal:
            return code, frame.f_lineno
        frame = frame.f_back
    return None, 0


@dataclasses.dataclass(frozen=True)
class _Arguments:
    """Where a function takes the arguments the ledger notes: (position, name, default) each."""

    group: tuple[int | None, str, Any] | None
    contribution: tuple[int | None, str, Any] | None
    reduce_op: tuple[int | None, str, Any] | None
    roots: tuple[tuple[int | None, str, Any], ...]
    async_op: tuple[int | None, str, Any] | None

    @classmethod
    def of(cls, function: Callable[..., Any], contribution: str | None, group: str) -> _Arguments:
        parameters = inspect.signature(function).parameters
        names = list(parameters)

        def where(name: str | None) -> tuple[int | None, str, Any] | None:
            if name is None or name not in parameters:
                return None
            parameter = parameters[name]
            position = names.index(name) if parameter.kind in (parameter.POSITIONAL_ONLY,
                                                              parameter.POSITIONAL_OR_KEYWORD) else None
            default = None if parameter.default is parameter.empty else parameter.default
            return position, name, default

        reduce_op = next((found for found in map(where, _REDUCE_OP_ARGUMENTS) if found), None)
        roots = tuple(found for found in map(where, _ROOT_ARGUMENTS) if found)
        return cls(where(group), where(contribution), reduce_op, roots, where("async_op"))


def _value(args: tuple[Any, ...], kwargs: dict[str, Any], where: tuple[int | None, str, Any] | None) -> Any:
    if where is None:
        return None
    position, name, default = where
    if name in kwargs:
        return kwargs[name]
    return args[position] if position is not None and position < len(args) else default


def _root(args: tuple[Any, ...], kwargs: dict[str, Any], roots: tuple[tuple[int | None, str, Any], ...]) -> Any:
    for where in roots:
        value = _value(args, kwargs, where)
        if value is not None and value != -1:  # functional p2p's "not given"
            return where[1], value
    return None


def _wrap(op: str, functional: bool, original: Callable[..., Any], arguments: _Arguments,
          group_key: Callable[[Any], Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        if torch.compiler.is_compiling():  # first: what follows would break Dynamo's graph
            return original(*args, **kwargs)
        state = _thread
        recorder = state.recorder or _process_recorder
        if recorder is None or state.busy:
            return original(*args, **kwargs)
        state.busy = True  # inside a recorded call (this thread's): what it calls is part of it
        try:
            code, line = _user_site()
            recorder.record((op, functional, group_key(_value(args, kwargs, arguments.group)),
                             _contribution(_value(args, kwargs, arguments.contribution)),
                             _reduce_op_key(_value(args, kwargs, arguments.reduce_op)),
                             _root(args, kwargs, arguments.roots),
                             _value(args, kwargs, arguments.async_op), code, line))
            return original(*args, **kwargs)
        finally:
            state.busy = False

    # A warning the original gives with a stacklevel (a deprecation) names the caller's line,
    # as without the ledger: warnings skip this frame.
    return hidden_from_warnings(recorded)


def _same(group: Any) -> Any:
    return group


def install() -> None:
    """Wrap the collective functions of this process, once."""
    global _installed
    with _install_lock:
        if _installed:
            return
        c10d = dist.distributed_c10d
        wrappers = []
        for op, contribution in C10D_OPS.items():
            original = getattr(c10d, op, None)
            if original is None:
                continue
            wrapper = _wrap(op, False, original, _Arguments.of(original, contribution, "group"), _same)
            setattr(c10d, op, wrapper)
            if getattr(dist, op, None) is original:
                setattr(dist, op, wrapper)
            wrappers.append(wrapper)
        for name, function in functional_collective_functions().items():
            parameters = list(inspect.signature(function).parameters)
            group = "group" if "group" in parameters else "group_name"
            wrapper = _wrap(name, True, function, _Arguments.of(function, parameters[0], group), _frozen)
            set_functional_collective_function(name, wrapper)
            wrappers.append(wrapper)
        # Called from code torch.compile runs eagerly (FSDP1's hooks), a wrapper's frame would be
        # compiled as a frame of its own: one more graph. Traced through, it is inlined as before.
        for wrapper in wrappers:
            never_compile_frames(wrapper.__code__)
        _installed = True
