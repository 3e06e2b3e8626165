"""``ThreadedProcessGroup``: a process group whose ranks are threads of this process.

Registered as the ``threaded`` backend (upstream's name): in a rank thread of a threaded world,
``dist.init_process_group("threaded", rank=r, world_size=n, store=store)`` and
``dist.new_group(ranks)`` create one; its collectives meet the other rank threads' calls in the
world's :class:`~.collective_exchange.Exchange`. Each rank thread has its own group object;
``torch.distributed``'s functions and functional collectives (``funcol``) reach it through the
thread's own c10d world (see ``c10d_world_per_thread``).

Supported: ``all_reduce`` (SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR),
``all_reduce_coalesced``, ``reduce``, ``broadcast``, ``all_gather``, ``all_gather_into_tensor``,
``reduce_scatter``, ``reduce_scatter_tensor``, ``all_to_all``, ``all_to_all_single``,
``barrier``, ``scatter``, ``gather``, ``send``/``recv`` (also from any source), and the object
collectives built on them. Not supported: ``batch_isend_irecv`` (coalescing), ``monitored_barrier``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from ... import devices
from . import collective_math as math
from .collective_exchange import Exchange, ThreadedWork

__all__ = ["THREADED_BACKEND", "ThreadedProcessGroup", "register_threaded_backend",
           "active_exchange", "set_active_exchange"]

__unittest = True

THREADED_BACKEND = "threaded"

_exchange_lock = threading.Lock()
_active: list[Exchange] = []


def active_exchange() -> Exchange:
    """The exchange new threaded groups meet in: the running threaded test's, else a
    process-wide one (for threads started by hand after ``_install_threaded_pg()``)."""
    with _exchange_lock:
        if not _active:
            _active.append(Exchange())
        return _active[-1]


def set_active_exchange(exchange: Exchange | None) -> None:
    """Make ``exchange`` the one new threaded groups meet in (None: none); the one it replaces
    is torn down, waking any thread still waiting in it."""
    with _exchange_lock:
        for replaced in _active:
            if replaced is not exchange:
                replaced.abort("the threaded world it belonged to has ended")
        _active.clear()
        if exchange is not None:
            _active.append(exchange)


def _options_root(opts: Any) -> int:
    return int(opts.rootRank)


def _options_op(opts: Any) -> Any:
    return opts.reduceOp if opts is not None else dist.ReduceOp.SUM


class ThreadedProcessGroup(dist.ProcessGroup):
    """One rank thread's view of a group of rank threads (upstream: ``ProcessLocalGroup``)."""

    def __init__(self, rank: int, size: int, name: str, global_ranks: list[int],
                 exchange: Exchange) -> None:
        super().__init__(rank, size)  # type: ignore[call-arg]  # the stubs list only the (store, rank, size) overload
        self._name = name
        self._exchange = exchange
        creator = global_ranks[rank] if global_ranks else rank
        self._key = exchange.group_key(name, creator)

    # -- what torch asks of a Python process group --------------------------------------------

    def getBackendName(self) -> str:
        return THREADED_BACKEND

    @property
    def group_name(self) -> str:  # type: ignore[override]  # a read-only property over the name
        return self._name

    @property
    def group_desc(self) -> str:
        return f"threaded group {self._name}"

    def __repr__(self) -> str:
        return f"ThreadedProcessGroup(name={self._name!r}, rank={self.rank()}, size={self.size()})"

    def _meet(self, kind: str, contribution: Any, complete: Callable[[dict[int, Any]], None],
              result: Any) -> ThreadedWork:
        return self._exchange.join(self._key, self.size(), self.rank(), kind, contribution,
                                   complete, result)

    # -- collectives ---------------------------------------------------------------------------

    def allreduce(self, tensors: list[torch.Tensor], opts: Any = None) -> ThreadedWork:  # type: ignore[override]  # c10d calls a Python backend with (tensors, opts)
        op = _options_op(opts)
        return self._meet(f"all_reduce({math.reduce_op_name(op)})", tensors,
                          lambda c: math.all_reduce(c, op), tensors)

    def allreduce_coalesced(self, tensors: list[torch.Tensor], opts: Any = None) -> ThreadedWork:
        op = _options_op(opts)
        return self._meet(f"all_reduce_coalesced({math.reduce_op_name(op)})", tensors,
                          lambda c: math.all_reduce(c, op), tensors)

    def reduce(self, tensors: list[torch.Tensor], opts: Any) -> ThreadedWork:  # type: ignore[override]  # c10d calls a Python backend with (tensors, opts)
        op, root = _options_op(opts), _options_root(opts)
        return self._meet(f"reduce({math.reduce_op_name(op)}, dst={root})", tensors,
                          lambda c: math.reduce(c, op, root), tensors)

    def broadcast(self, tensors: list[torch.Tensor], opts: Any) -> ThreadedWork:  # type: ignore[override]  # c10d calls a Python backend with (tensors, opts)
        root = _options_root(opts)
        return self._meet(f"broadcast(src={root})", tensors, lambda c: math.broadcast(c, root),
                          tensors)

    def allgather(self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor],  # type: ignore[override]  # c10d calls a Python backend with (tensors, opts)
                  opts: Any = None) -> ThreadedWork:
        return self._meet("all_gather", (outputs, inputs), math.all_gather, outputs)

    def all_gather_single(self, output: torch.Tensor, input: torch.Tensor,
                          opts: Any = None) -> ThreadedWork:
        return self._meet("all_gather_into_tensor", (output, input), math.all_gather_into_tensor,
                          [output])

    def all_gather_single_coalesced(self, outputs: list[torch.Tensor], inputs: list[torch.Tensor],
                                    opts: Any = None) -> ThreadedWork:
        pairs = list(zip(outputs, inputs, strict=True))

        def complete(contributions: dict[int, Any]) -> None:
            for i in range(len(pairs)):
                math.all_gather_into_tensor({r: c[i] for r, c in contributions.items()})

        return self._meet("all_gather_into_tensor_coalesced", pairs, complete, outputs)

    def reduce_scatter(self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]],  # type: ignore[override]  # c10d calls a Python backend with (tensors, opts)
                       opts: Any = None) -> ThreadedWork:
        op = _options_op(opts)
        return self._meet(f"reduce_scatter({math.reduce_op_name(op)})", (outputs, inputs),
                          lambda c: math.reduce_scatter(c, op), outputs)

    def reduce_scatter_single(self, output: torch.Tensor, input: torch.Tensor,
                              opts: Any = None) -> ThreadedWork:
        op = _options_op(opts)
        return self._meet(f"reduce_scatter_tensor({math.reduce_op_name(op)})", (output, input),
                          lambda c: math.reduce_scatter_tensor(c, op), [output])

    def reduce_scatter_single_coalesced(self, outputs: list[torch.Tensor],
                                        inputs: list[torch.Tensor], opts: Any = None) -> ThreadedWork:
        op = _options_op(opts)
        pairs = list(zip(outputs, inputs, strict=True))

        def complete(contributions: dict[int, Any]) -> None:
            for i in range(len(pairs)):
                math.reduce_scatter_tensor({r: c[i] for r, c in contributions.items()}, op)

        return self._meet(f"reduce_scatter_tensor_coalesced({math.reduce_op_name(op)})", pairs,
                          complete, outputs)

    def alltoall(self, outputs: list[torch.Tensor], inputs: list[torch.Tensor],
                 opts: Any = None) -> ThreadedWork:
        return self._meet("all_to_all", (outputs, inputs), math.all_to_all, outputs)

    def all_to_all_single(self, output: torch.Tensor, input: torch.Tensor,
                          output_splits: list[int] | None, input_splits: list[int] | None,
                          opts: Any = None) -> ThreadedWork:
        return self._meet("all_to_all_single", (output, input, output_splits, input_splits),
                          math.all_to_all_single, [output])

    def barrier(self, opts: Any = None) -> ThreadedWork:
        return self._meet("barrier", None, lambda c: None, [])

    def scatter(self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]],  # type: ignore[override]  # c10d calls a Python backend with (tensors, opts)
                opts: Any) -> ThreadedWork:
        root = _options_root(opts)
        return self._meet(f"scatter(src={root})", (outputs, inputs),
                          lambda c: math.scatter(c, root), outputs)

    def gather(self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor],  # type: ignore[override]  # c10d calls a Python backend with (tensors, opts)
               opts: Any) -> ThreadedWork:
        root = _options_root(opts)
        return self._meet(f"gather(dst={root})", (outputs, inputs),
                          lambda c: math.gather(c, root), outputs)

    # -- point to point ------------------------------------------------------------------------

    def send(self, tensors: list[torch.Tensor], dst: int, tag: int = 0) -> ThreadedWork:
        return self._exchange.send(self._key, self.rank(), dst, tag, tensors[0])

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int = 0) -> ThreadedWork:
        return self._exchange.recv(self._key, src, self.rank(), tag, tensors[0])

    def recv_anysource(self, tensors: list[torch.Tensor], tag: int = 0) -> ThreadedWork:
        return self._exchange.recv(self._key, None, self.rank(), tag, tensors[0])


def _create(options: Any, backend_options: Any) -> ThreadedProcessGroup:
    """The backend's creator (torch's extended API: it is told the group's name and ranks)."""
    return ThreadedProcessGroup(options.group_rank, options.group_size, str(options.group_id),
                                list(options.global_ranks_in_group), active_exchange())


def register_threaded_backend() -> None:
    """(Re-)register the ``threaded`` backend with our creator.

    Called whenever a threaded world starts, so it is ours even if another module (upstream's
    ``multi_threaded_pg``) registered the name since: the last registration wins.
    """
    dist.Backend.register_backend(THREADED_BACKEND, _create, extended_api=True,
                                  devices=sorted({"cpu", devices.device_type()}))
