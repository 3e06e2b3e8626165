"""A stream-transform extension of distributed checkpoint (DCP) for tests: ``Rot13Example``.

DCP lets a ``FileSystemWriter`` pass every file it writes through stream transforms (such as
compression) and records each one's descriptor, so a ``FileSystemReader`` whose registry knows
the transform undoes it. ``Rot13Example`` is upstream's transform for testing that machinery.
Despite its name it swaps the case of ASCII letters (``b"Ab1"`` becomes ``b"aB1"``), exactly as
upstream's does, so files written with either harness read back with the other; applied twice
it gives the original bytes.

Example::

    writer = FileSystemWriter(path, _extensions=[Rot13Example()])
    reader = FileSystemReader(path, _extension_registry=get_test_extension_registry())
"""

from __future__ import annotations

import io
import os
from typing import IO, Any, cast

from .._torch_private import checkpoint_extension_api

__all__ = ["Rot13Example", "get_test_extension_registry", "swap_letter_case"]

_extension = checkpoint_extension_api()
_StreamTransformExtension: Any = _extension.StreamTransformExtension

# Upper-case ASCII letters to lower case and back; every other byte unchanged.
_SWAP_CASE = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                             b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def swap_letter_case(data: bytes | bytearray | memoryview) -> bytes:
    """``data`` with the case of its ASCII letters swapped (the transform, both ways)."""
    return bytes(data).translate(_SWAP_CASE)


class _SwapCaseWriter(io.RawIOBase):
    """Writes the transformed bytes of what it is given to ``output`` (never changes the caller's buffer)."""

    def __init__(self, output: IO[bytes]) -> None:
        super().__init__()
        self._output = output

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        data = memoryview(b).cast("B")
        self._output.write(swap_letter_case(data))
        return len(data)

    def flush(self) -> None:
        if not self.closed:
            self._output.flush()


class _SwapCaseReader(io.RawIOBase):
    """Reads ``source`` and hands back its bytes transformed; seeks where ``source`` can."""

    def __init__(self, source: IO[bytes]) -> None:
        super().__init__()
        self._source = source

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int | None:
        view = memoryview(b).cast("B")
        data = self._source.read(len(view))
        if data is None:
            return None
        count = len(data)
        view[:count] = swap_letter_case(data)
        return count

    def seekable(self) -> bool:
        return self._source.seekable()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._source.seek(offset, whence)

    def tell(self) -> int:
        return self._source.tell()


class Rot13Example(_StreamTransformExtension):
    """Upstream's test transform, registered as ``stream.rot13`` (descriptor
    ``stream.rot13/1``): swaps the case of ASCII letters on the way out and back in."""

    def __init__(self, chunk_size: int = io.DEFAULT_BUFFER_SIZE) -> None:
        super().__init__()
        self._chunk_size = chunk_size

    @staticmethod
    def registry_name() -> str:
        return "stream.rot13"

    @staticmethod
    def from_descriptor(version: str) -> Rot13Example:
        """The transform for a recorded descriptor's version; only version 1.x is known."""
        if version.partition(".")[0] != "1":
            raise ValueError(f"Unknown extension {version=}")
        return Rot13Example()

    def get_descriptor(self) -> str:
        return f"{self.registry_name()}/1"

    def transform_to(self, output: IO[bytes]) -> IO[bytes]:
        return cast(IO[bytes], _SwapCaseWriter(output))

    def transform_from(self, input: IO[bytes]) -> IO[bytes]:
        return cast(IO[bytes], _SwapCaseReader(input))


def get_test_extension_registry() -> Any:
    """A DCP ``ExtensionRegistry`` that knows torch's own transforms and :class:`Rot13Example`."""
    registry = _extension.ExtensionRegistry()
    registry.register(Rot13Example)
    return registry
