"""``HardwareClassification``: what hardware a test class needs, as a label on the class.

Upstream labels each test class with a class attribute, ``hw_classification =
HardwareClassification.GENERIC`` (or ``ACCELERATOR``, ``CPU``, ``CUDA``, ``MPS``, ``XPU``). A
linter checks that the label agrees with how the class is written (a ``GENERIC`` class takes no
``device`` argument and is not instantiated per device type; a ``CUDA`` one is instantiated
``only_for="cuda"``), and a pytest option (``--hw-classification CPU CUDA``) keeps only the
tests of the classes labelled so, through :func:`filter_by_hw_classification`.

The label changes nothing when a test runs: this harness decides where a test runs and what it
skips from the machine and the test's decorators, never from the label.

Example::

    class TestShardUtils(TestCase):
        hw_classification = HardwareClassification.GENERIC

    kept = filter_by_hw_classification(suite_tests, {HardwareClassification.GENERIC})
"""

from __future__ import annotations

import enum
import unittest
from collections.abc import Callable, Collection, Iterable
from typing import Any, TypeVar

__all__ = ["HardwareClassification", "HW_CLASSIFICATION_ATTR", "hw_classification_of",
           "filter_by_hw_classification"]

_T = TypeVar("_T")

# The class attribute that carries a test class's label.
HW_CLASSIFICATION_ATTR = "hw_classification"


class HardwareClassification(enum.Enum):
    """The hardware a test class needs (its ``hw_classification`` class attribute)."""

    GENERIC = "generic"  # no device at all: the tests take no ``device`` argument
    ACCELERATOR = "accelerator"  # any accelerator: instantiated per device type, except the CPU
    CPU = "cpu"  # the CPU only (instantiated ``only_for="cpu"``)
    CUDA = "cuda"  # CUDA only
    MPS = "mps"  # Apple's MPS only
    XPU = "xpu"  # Intel's XPU only


def hw_classification_of(cls: type | None) -> HardwareClassification | None:
    """The label of test class ``cls`` (inherited labels count), or None when it has none."""
    label = getattr(cls, HW_CLASSIFICATION_ATTR, None)
    return label if isinstance(label, HardwareClassification) else None


def _class_of(item: Any) -> type | None:
    """A unittest test's class, a pytest item's class (its ``cls``), or a class itself."""
    if isinstance(item, type):
        return item
    if isinstance(item, unittest.TestCase):
        return type(item)
    cls = getattr(item, "cls", None)
    return cls if isinstance(cls, type) else None


def filter_by_hw_classification(
    items: Iterable[_T],
    classifications: Collection[HardwareClassification],
    get_class: Callable[[_T], type | None] = _class_of,
    on_match: Callable[[_T], object] | None = None,
) -> list[_T]:
    """The items whose class is labelled with one of ``classifications``, in their order.

    ``get_class(item)`` gives an item's test class (by default: a unittest test's class, a
    pytest item's ``cls``, or the item itself if it is a class); ``on_match(item)`` is called
    for each kept item, as it is found. An item without a class, or whose class has no label,
    is not kept: the filter selects labelled tests only.
    """
    wanted = set(classifications)
    unknown = [c for c in wanted if not isinstance(c, HardwareClassification)]
    if unknown:
        raise TypeError(f"filter_by_hw_classification takes HardwareClassification members, got {unknown!r}")
    kept = []
    for item in items:
        if hw_classification_of(get_class(item)) in wanted:
            kept.append(item)
            if on_match is not None:
                on_match(item)
    return kept
