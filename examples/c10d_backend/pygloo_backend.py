"""An out-of-tree c10d backend written in Python: ``pygloo``, what a vendor copies to start.

Importing this module registers the backend by name; ``torch.distributed`` then makes its
groups like any other's::

    import pygloo_backend  # registers "pygloo"
    dist.init_process_group("pygloo", init_method=..., rank=rank, world_size=world_size)

:class:`PyGlooGroup` is a ``torch.distributed.ProcessGroup`` written in Python: c10d calls its
methods with the tensors and the options of each call (``AllreduceOptions``...), and each
returns a ``Work``. This one forwards every call to a gloo group it makes over the same store;
a vendor replaces the forwarding with calls into their own collective library, method by
method, and runs the conformance kit after each::

    python -m torch_testing_ext.conformance --backend pygloo --import pygloo_backend --world-sizes 2,3

``CONFORMANCE_CLAIMS`` says what the backend promises; the kit holds it to exactly that.
"""

from __future__ import annotations

import datetime
from typing import Any

import torch
import torch.distributed as dist

__all__ = ["BACKEND", "PyGlooGroup", "CONFORMANCE_CLAIMS", "register"]

BACKEND = "pygloo"

#: What pygloo promises, in the kit's manifest format: what gloo does (it forwards to gloo), less
#: what a Python group registered this way cannot route (checked by running the kit on it).
_NO_DEVICE_BACKEND = ("c10d sends this op to the group's backend for the tensor's device type, which a Python "
                      "ProcessGroup does not register (RuntimeError: No backend type associated with device type cpu)")
CONFORMANCE_CLAIMS: dict[str, Any] = {
    "backend": BACKEND,
    "devices": ["cpu"],
    "areas": ["collectives", "p2p", "objects", "groups", "async", "functional", "layouts", "timeouts", "errors",
              "calls"],
    "dtypes": ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"],
    "reduce_ops": ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR"],
    "not_claimed": {
        "collectives.all_to_all[[]*]": "gloo's list all_to_all takes equal-sized tensors only",
        "groups.split_group": "split_group needs a default group bound to a device; a CPU group has none",
        "layouts.*_strided[[]*]": "gloo reads and writes a strided view as if it were contiguous",
        "calls.reduce_scatter_tensor_is_completed": "gloo's reduce_scatter_tensor work never says is_completed()",
        "functional.all_gather_into_tensor[[]*]": _NO_DEVICE_BACKEND,
        "functional.reduce_scatter_tensor[[]*]": _NO_DEVICE_BACKEND,
    },
}


class PyGlooGroup(dist.ProcessGroup):
    """One rank's view of a pygloo group: every collective forwarded to a gloo group.

    The method names and arguments are those c10d uses for a backend written in Python:
    ``allreduce(tensors, opts)``, ``allgather(output_lists, inputs, opts)``,
    ``all_gather_single(output, input, opts)`` (``all_gather_into_tensor``), ``send(tensors,
    dst, tag)``... Each returns the ``Work`` of the call (here, gloo's).
    """

    def __init__(self, store: dist.Store, rank: int, size: int, timeout: datetime.timedelta, name: str) -> None:
        super().__init__(rank, size)  # type: ignore[call-arg]  # the stubs list only the (store, rank, size) overload
        self._name = name
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)

    def getBackendName(self) -> str:
        return BACKEND

    @property
    def group_name(self) -> str:  # type: ignore[override]
        """The group's name, as c10d gave it (functional collectives and DTensor look groups up by it)."""
        return self._name

    def __repr__(self) -> str:
        return f"PyGlooGroup(rank={self.rank()}, size={self.size()})"

    # -- collectives ---------------------------------------------------------------------------

    def allreduce(self, tensors: list[torch.Tensor], opts: Any = None) -> Any:  # type: ignore[override]
        return self._gloo.allreduce(tensors, opts or dist.AllreduceOptions())

    def allreduce_coalesced(self, tensors: list[torch.Tensor], opts: Any = None) -> Any:
        return self._gloo.allreduce_coalesced(tensors, opts or dist.AllreduceCoalescedOptions())

    def reduce(self, tensors: list[torch.Tensor], opts: Any) -> Any:  # type: ignore[override]
        return self._gloo.reduce(tensors, opts)

    def broadcast(self, tensors: list[torch.Tensor], opts: Any) -> Any:  # type: ignore[override]
        return self._gloo.broadcast(tensors, opts)

    def allgather(self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor],  # type: ignore[override]
                  opts: Any = None) -> Any:
        return self._gloo.allgather(outputs, inputs, opts or dist.AllgatherOptions())

    def all_gather_single(self, output: torch.Tensor, input: torch.Tensor, opts: Any = None) -> Any:
        return self._gloo._allgather_base(output, input, opts or dist.AllgatherOptions())

    def reduce_scatter(self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]],  # type: ignore[override]
                       opts: Any = None) -> Any:
        return self._gloo.reduce_scatter(outputs, inputs, opts or dist.ReduceScatterOptions())

    def reduce_scatter_single(self, output: torch.Tensor, input: torch.Tensor, opts: Any = None) -> Any:
        return self._gloo._reduce_scatter_base(output, input, opts or dist.ReduceScatterOptions())

    def alltoall(self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None) -> Any:
        return self._gloo.alltoall(outputs, inputs, opts or dist.AllToAllOptions())

    def all_to_all_single(self, output: torch.Tensor, input: torch.Tensor, output_splits: list[int] | None,
                          input_splits: list[int] | None, opts: Any = None) -> Any:
        return self._gloo.alltoall_base(output, input, output_splits or [], input_splits or [],
                                        opts or dist.AllToAllOptions())

    def barrier(self, opts: Any = None) -> Any:  # type: ignore[override]
        return self._gloo.barrier(opts or dist.BarrierOptions())

    def scatter(self, outputs: list[torch.Tensor], inputs: list[list[torch.Tensor]],  # type: ignore[override]
                opts: Any) -> Any:
        return self._gloo.scatter(outputs, inputs, opts)

    def gather(self, outputs: list[list[torch.Tensor]], inputs: list[torch.Tensor],  # type: ignore[override]
               opts: Any) -> Any:
        return self._gloo.gather(outputs, inputs, opts)

    # -- point to point ------------------------------------------------------------------------

    def send(self, tensors: list[torch.Tensor], dst: int, tag: int = 0) -> Any:  # type: ignore[override]
        return self._gloo.send(tensors, dst, tag)

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int = 0) -> Any:  # type: ignore[override]
        return self._gloo.recv(tensors, src, tag)

    def recv_anysource(self, tensors: list[torch.Tensor], tag: int = 0) -> Any:  # type: ignore[override]
        return self._gloo.recv_anysource(tensors, tag)


def register(name: str = BACKEND, group: type[PyGlooGroup] = PyGlooGroup) -> None:
    """Register ``group`` (pygloo's, or a subclass of it) under ``name``, for CPU tensors.

    With ``extended_api=True`` c10d hands the creator the group's options: its store, rank, size,
    timeout and name (``group_id``), for the default group and for every ``new_group``."""

    def create(options: Any, backend_options: Any) -> PyGlooGroup:
        return group(options.store, options.group_rank, options.group_size, options.timeout, str(options.group_id))

    dist.Backend.register_backend(name, create, extended_api=True, devices=["cpu"])


register()
