"""The contract's items, a module per area; importing this package registers them all.

- ``collective_items``: all_reduce by reduce op and dtype, gathers, reduce-scatters, all-to-alls, rooted ops, barrier
- ``p2p_items``: send/recv, isend/irecv, batch_isend_irecv, a ring, any source, out-of-order receives
- ``object_items``: all_gather_object, broadcast_object_list, gather_object, scatter_object_list
- ``group_items``: new_group (whole, subset), subgroups, split_group, non-members carrying on
- ``async_items``: async_op=True works: wait, is_completed, get_future, reverse-order waits
- ``coalescing_items``: all_reduce_coalesced, all_gather_coalesced over tensors of several shapes
- ``functional_items``: torch.ops._c10d_functional all_reduce, all_gather_into_tensor, reduce_scatter_tensor, broadcast
- ``dtensor_items``: DTensor on a 1-D mesh: distribute_tensor and the basic redistributions
- ``layout_items``: non-contiguous (transposed, strided) and zero-size tensors
- ``timeout_items``: a group timeout ends a collective a rank never joins; destroying a subgroup
- ``error_items``: size mismatches raise on every rank, and the group works after
- ``call_items``: every collective's outputs have the right shapes and dtypes and its work completes
"""

from ..contract import Item, registered
from . import (  # noqa: F401  # each registers its items
    async_items,
    call_items,
    coalescing_items,
    collective_items,
    dtensor_items,
    error_items,
    functional_items,
    group_items,
    layout_items,
    object_items,
    p2p_items,
    timeout_items,
)

__all__ = ["all_items"]


def all_items() -> dict[str, Item]:
    """Every item of the contract (and any a backend's module registered), by id."""
    return registered()
