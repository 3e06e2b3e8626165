"""A kit test's id, and the world size and item it names: ``test_item[2ranks-p2p.send_recv]``.

Torch-free; shared by the tests' parametrization and the session that scores them.
"""

from __future__ import annotations

__all__ = ["param_id", "item_of"]


def param_id(world_size: int, item_id: str) -> str:
    """The id of an item's test in a world: ``2ranks-collectives.all_reduce[SUM-float32]``."""
    return f"{world_size}ranks-{item_id}"


def item_of(nodeid: str) -> tuple[int, str] | None:
    """(world size, item id) of a kit test's node id; None for any other test."""
    marker = "::test_item["
    if marker not in nodeid or not nodeid.endswith("]"):
        return None
    size, _, item_id = nodeid.split(marker, 1)[1][:-1].partition("ranks-")
    return (int(size), item_id) if size.isdigit() else None
