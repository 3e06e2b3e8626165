"""Which sample input a test is on: ``TrackedInputIter`` and the test function it reports to.

An OpInfo's ``sample_inputs`` wraps its generator in a ``TrackedInputIter``: before each item
it seeds every random number generator from the running test's generic name (so a test's inputs
do not depend on the tests before it), and it records the item and its index on the test
function, where a failure report (``ops``) finds it.

Example::

    for sample in TrackedInputIter(iter(samples), "sample input"):
        ...  # a failure here names "sample input at index N"
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import os
import unittest
from collections.abc import Callable, Iterator
from typing import Any

from .._torch_private import test_method_name
from .parametrize import GENERIC_QUALNAME_ATTR
from .tensor_testcase import current_seed, seed_everything

__all__ = ["TrackedInput", "TrackedInputIter", "extract_test_fn", "get_tracked_input", "clear_tracked_input",
           "OPINFO_SAMPLE_INPUT_INDEX"]


def _sample_index_from_environment() -> int | None:
    raw = os.environ.get("PYTORCH_OPINFO_SAMPLE_INPUT_INDEX", "")
    return int(raw) if raw else None


# Run only the sample input at this index (PYTORCH_OPINFO_SAMPLE_INPUT_INDEX, read at import).
OPINFO_SAMPLE_INPUT_INDEX: int | None = _sample_index_from_environment()


def extract_test_fn() -> Callable[..., Any] | None:
    """The test method the calling code runs in (found as the ``self`` of a frame up the
    stack that is a ``TestCase`` running a ``test*`` method of its own class), or None."""
    frame = inspect.currentframe()
    try:
        while frame is not None:
            candidate = frame.f_locals.get("self")
            if isinstance(candidate, unittest.TestCase):
                name = test_method_name(candidate)
                method = getattr(type(candidate), name, None) if name.startswith("test") else None
                if callable(method):
                    return method
            frame = frame.f_back
        return None
    finally:
        del frame


@dataclasses.dataclass
class TrackedInput:
    """The item a ``TrackedInputIter`` gave last: its index, the tracked value, its kind."""

    index: int
    val: Any
    type_desc: str


def get_tracked_input() -> TrackedInput | None:
    """The input the running test's ``TrackedInputIter`` gave last, if any."""
    test_fn = extract_test_fn()
    return None if test_fn is None else getattr(test_fn, "tracked_input", None)


def clear_tracked_input() -> None:
    """Forget the running test's tracked input."""
    test_fn = extract_test_fn()
    if test_fn is not None and hasattr(test_fn, "tracked_input"):
        test_fn.tracked_input = None


def _seed_for(test_fn: Callable[..., Any] | None) -> int:
    """A seed from the generic test's qualified name (the first 4 bytes of its SHA-256, little
    endian, as upstream), or the test seed outside a test."""
    if test_fn is None:
        return current_seed()
    name = getattr(test_fn, GENERIC_QUALNAME_ATTR, test_fn.__qualname__)
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little")


class TrackedInputIter:
    """Iterate ``child_iter``, recording each item on the running test function.

    ``item_callback(item, index)`` gives what the iteration yields (default: the item),
    ``track_callback(item)`` what is recorded (default: the item); ``set_seed`` reseeds before
    each item; ``restrict_to_index`` yields only the item at that index."""

    def __init__(self, child_iter: Any, input_type_desc: str,
                 item_callback: Callable[[Any, int], Any] | None = None,
                 track_callback: Callable[[Any], Any] | None = None,
                 set_seed: bool = True, restrict_to_index: int | None = None) -> None:
        self.child_iter: Iterator[tuple[int, Any]] = enumerate(child_iter)
        self.input_type_desc = input_type_desc
        self.item_callback: Callable[[Any, int], Any] = item_callback or (lambda item, _index: item)
        self.track_callback: Callable[[Any], Any] = track_callback or (lambda item: item)
        self.test_fn = extract_test_fn()
        self.set_seed = set_seed
        self.restrict_to_index = restrict_to_index

    def __iter__(self) -> TrackedInputIter:
        return self

    def __next__(self) -> Any:
        while True:
            if self.set_seed:
                seed_everything(_seed_for(self.test_fn))
            index, item = next(self.child_iter)
            if self.restrict_to_index is None or index == self.restrict_to_index:
                break
        if self.test_fn is not None and hasattr(self.test_fn, "tracked_input"):
            self.test_fn.tracked_input = TrackedInput(index, self.track_callback(item), self.input_type_desc)
        return self.item_callback(item, index)
