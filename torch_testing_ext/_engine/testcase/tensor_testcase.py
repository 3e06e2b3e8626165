"""``TestCase``: expecttest's TestCase with tensor-aware asserts and seeded random state.

Example::

    from torch_testing_ext.common_utils import TestCase, run_tests

    class TestAdd(TestCase):
        def test_add(self):
            self.assertEqual(torch.ones(2) + 1, [2.0, 2.0])
            self.assertExpectedInline(str(torch.tensor([1])), \"\"\"tensor([1])\"\"\")

    if __name__ == "__main__":
        run_tests()
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import expecttest
import torch
from typing_extensions import TypedDict, Unpack

from ... import devices
from . import compiler_cache
from .comparison import assert_equal

__all__ = ["TestCase", "DEFAULT_SEED", "set_default_seed", "current_seed", "seed_everything"]

__unittest = True  # unittest hides this module's frames from tracebacks

# Before a test can import inductor: its cache goes where the test run leaves nothing behind.
compiler_cache.keep_inductor_cache_private()

DEFAULT_SEED = 1234
_seed = DEFAULT_SEED


def set_default_seed(seed: int) -> None:
    """Change the seed every ``TestCase.setUp`` uses (``run_tests --seed N``)."""
    global _seed
    _seed = seed


def current_seed() -> int:
    """The seed every ``TestCase.setUp`` (and every rank) starts from."""
    return _seed


def seed_everything(seed: int | None = None) -> None:
    """Seed torch, ``random`` and numpy (if installed) with ``seed`` (default: the test seed)."""
    seed = _seed if seed is None else seed
    if devices.accelerator_type() is None:
        # The CPU generator is all there is. torch.manual_seed would also queue a lazy seeding
        # of each accelerator module torch was built with, recording a stack every time
        # (a millisecond per call, which a test on kept ranks would pay on every rank).
        torch.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass


class TestCase(expecttest.TestCase):
    """A unittest TestCase whose ``assertEqual`` understands tensors.

    ``assertEqual(actual, expected, msg=None, *, rtol=None, atol=None, exact_dtype=True,
    exact_device=False)`` follows :func:`torch.testing.assert_close` for tensors (default
    tolerances by dtype), compares numbers with a tolerance and containers element by element.
    ``setUp`` seeds every random number generator so that each test starts from the same state.
    Also upstream's ``assertNotWarn`` and ``_attempt_load_from_subprocess``.
    """

    # The least absolute and relative tolerance assertEqual uses for floating values: a device-type
    # test's precisionOverride/toleranceOverride sets them for its dtype while it runs.
    precision: float = 0.0
    rel_tol: float = 0.0

    def setUp(self) -> None:
        super().setUp()
        seed_everything()

    def assertEqual(
        self, actual: Any, expected: Any, msg: str | None = None,
        **options: Unpack[ComparisonOptions],
    ) -> None:
        mismatch = _mismatch(actual, expected, options, (self.precision, self.rel_tol))
        if mismatch is not None:
            raise self.failureException(f"{msg}\n{mismatch}" if msg else mismatch)

    def assertNotEqual(
        self, actual: Any, expected: Any, msg: str | None = None,
        **options: Unpack[ComparisonOptions],
    ) -> None:
        if _mismatch(actual, expected, options, (self.precision, self.rel_tol)) is None:
            detail = f"{actual!r} == {expected!r}"
            raise self.failureException(f"{msg}\n{detail}" if msg else detail)

    def assertGreaterAlmostEqual(self, first: Any, second: Any, places: int | None = None,
                                 msg: str | None = None, delta: Any = None) -> None:
        """``first >= second``, or short of it by at most ``delta``, or (without ``delta``) by
        a difference that rounds to 0 at ``places`` decimals (default 7), as
        ``assertAlmostEqual`` decides closeness."""
        if delta is not None and places is not None:
            raise TypeError("assertGreaterAlmostEqual: give delta or places, not both")
        if first >= second:
            return
        short = second - first
        if delta is not None:
            if short <= delta:
                return
            detail = f"{first!r} is less than {second!r} by {short!r}, more than delta {delta!r}"
        else:
            places = 7 if places is None else places
            if round(short, places) == 0:
                return
            detail = f"{first!r} is less than {second!r} by {short!r}, not 0 at {places} places"
        raise self.failureException(self._formatMessage(msg, detail))

    def assertNotWarn(self, fn: Callable[[], Any], msg: str = "") -> None:
        """Fail if ``fn()`` warns, counting warnings torch would otherwise show only once."""
        warn_always = torch.is_warn_always_enabled()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.set_warn_always(True)
            try:
                fn()
            finally:
                torch.set_warn_always(warn_always)
        if caught:
            shown = "; ".join(f"{w.category.__name__}: {w.message}" for w in caught)
            detail = f"{len(caught)} unexpected warning(s): {shown}"
            raise self.failureException(f"{msg}\n{detail}" if msg else detail)

    def _attempt_load_from_subprocess(self, file: str | os.PathLike[str], import_string: str,
                                      expected_failure_message: str | None = None) -> None:
        """``torch.load(file, weights_only=True)`` in a fresh interpreter that first runs
        ``import torch;`` and ``import_string``. Without ``expected_failure_message`` the load
        must succeed (else ``RuntimeError`` with the interpreter's output); with it, the load
        must fail with output containing that text."""
        script = f"import torch;{import_string}torch.load({os.fspath(file)!r}, weights_only=True)"
        done = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              cwd=Path(__file__).parent)  # no ``torch`` directory to shadow torch
        output = done.stdout.decode(errors="replace")
        if expected_failure_message is None:
            if done.returncode:
                raise RuntimeError(output)
        elif not done.returncode:
            raise self.failureException(
                f"the load succeeded; expected it to fail with {expected_failure_message!r}")
        elif expected_failure_message not in output:
            raise self.failureException(
                f"the load failed without {expected_failure_message!r}:\n{output}")

    @staticmethod
    def run_process_no_exception(code: str, env: dict[str, str] | None = None) -> tuple[bytes, bytes]:
        """Run ``code`` with ``python -c`` in a fresh interpreter (``env``: its whole
        environment, default this process's) and return its ``(stdout, stderr)`` as bytes,
        whatever its exit status (as upstream, the caller checks the output)."""
        done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                              stdin=subprocess.DEVNULL, env=env)
        return done.stdout, done.stderr


class ComparisonOptions(TypedDict, total=False):
    """The keyword options of ``assertEqual`` and ``assertNotEqual``."""

    rtol: float | None
    atol: float | None
    exact_dtype: bool
    exact_device: bool


def _mismatch(actual: Any, expected: Any, options: ComparisonOptions,
              floors: tuple[float, float] = (0.0, 0.0)) -> str | None:
    """Why ``actual`` does not equal ``expected``, or None when it does (``floors``: the least
    ``(atol, rtol)``)."""
    try:
        assert_equal(actual, expected, floors=floors, **options)
    except AssertionError as error:
        return str(error)
    return None
