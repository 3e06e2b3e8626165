"""Checkpoint test helpers, named as in ``torch.testing._internal.distributed.checkpoint_utils``.

``Rot13Example`` and ``get_test_extension_registry`` are loaded when first asked for: they need
``torch.distributed.checkpoint``, whose import takes over a second, and most users of this face
want ``with_temp_dir`` only.
"""

from __future__ import annotations

from typing import Any

from .._engine.distributed_bases.shared_temp_dir import with_temp_dir

__all__ = [
    "with_temp_dir",
    "Rot13Example",  # noqa: F822  # given by __getattr__ below
    "get_test_extension_registry",  # noqa: F822  # given by __getattr__ below
]

_ON_FIRST_USE = ("Rot13Example", "get_test_extension_registry")


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        from .._engine.distributed_bases import checkpoint_extensions

        return getattr(checkpoint_extensions, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
