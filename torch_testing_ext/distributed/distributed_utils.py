"""A fake world in one process, named as in ``torch.testing._internal.distributed.distributed_utils``.
Importing it registers the ``mock_process_group`` backend, as upstream's does."""

from __future__ import annotations

from .._engine.process_groups.mock_process_group import (
    MockProcessGroup,
    create_mock_pg,
    mock_init_dist,
    register_mock_backend,
    with_dist,
    with_fake_comms,
)

__all__ = ["MockProcessGroup", "create_mock_pg", "mock_init_dist", "with_dist", "with_fake_comms"]

register_mock_backend()
