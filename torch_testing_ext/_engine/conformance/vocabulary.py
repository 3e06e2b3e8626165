"""The contract's vocabulary: its version, its areas, the reduce ops and dtypes it speaks of.

Torch-free, so that claims are read and reports written without torch.
"""

from __future__ import annotations

__all__ = ["KIT_VERSION", "AREAS", "REDUCE_OPS", "FLOATS", "INTEGERS", "DTYPES"]

#: The contract's version, in every report: an item's meaning changes only with it.
KIT_VERSION = "1.0.0"

#: Every area of the contract, and what it holds.
AREAS: dict[str, str] = {
    "collectives": "all_reduce with each reduce op and dtype, all_gather(_into_tensor), reduce_scatter(_tensor), "
                   "all_to_all(_single) with uneven splits, broadcast, reduce, gather, scatter from every root, "
                   "barrier",
    "p2p": "send/recv, isend/irecv, batch_isend_irecv, any source order",
    "objects": "all_gather_object, broadcast_object_list, gather_object, scatter_object_list",
    "groups": "new_group, subgroups, split_group, ranks that are not members",
    "async": "async_op=True: wait, is_completed, get_future",
    "coalescing": "collectives coalesced (all_reduce_coalesced, batched ops)",
    "functional": "torch.ops._c10d_functional collectives",
    "dtensor": "DTensor's basic redistributions over the backend",
    "layouts": "non-contiguous and zero-size tensors",
    "timeouts": "timeouts, abort and shutdown",
    "errors": "errors raised where the backend promises them (size mismatches)",
    "calls": "every collective returns outputs of the right shapes and dtypes, and its work completes",
}
REDUCE_OPS = ("SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR")
FLOATS = ("float32", "float64", "float16", "bfloat16")
INTEGERS = ("int8", "uint8", "int32", "int64")
DTYPES = (*FLOATS, *INTEGERS, "bool", "complex64")
