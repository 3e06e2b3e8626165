"""Tracebacks that start at the user's frame, as unittest shows them.

unittest hides the frames of modules that set ``__unittest = True`` (its own): the leading ones
(the runner that called the test) and, for an assertion failure, the trailing ones (the
``assert*`` method that raised). Our harness modules set the same marker, pytest's runner
(``_pytest``, ``pluggy``) counts as harness too (it calls the test in a launched rank), the
collective ledger's wrapper is left out wherever it is, and a rank formats
its exception with :func:`format_test_exception`, so a failure in a rank points at the test's
line, not at ours. :func:`format_user_stack` does the same for the stack of a thread that is
still running (a rank thread stuck at its timeout).
"""

from __future__ import annotations

import traceback
from types import FrameType, TracebackType

__all__ = ["format_test_exception", "format_user_stack"]


_RUNNER_MODULES = ("_pytest.", "pluggy.")  # pytest's runner, when it calls the test in a rank
# The collective ledger's wrapper sits between the test's call and torch's function: not shown.
_TRANSPARENT_MODULE = "torch_testing_ext._engine.ledger.recording"


def _is_harness_code(module_globals: dict[str, object]) -> bool:
    name = module_globals.get("__name__")
    return "__unittest" in module_globals or (isinstance(name, str) and name.startswith(_RUNNER_MODULES))


def _is_harness_frame(tb: TracebackType) -> bool:
    return _is_harness_code(tb.tb_frame.f_globals)


def format_test_exception(
    error: BaseException, failure_type: type[BaseException] = AssertionError
) -> str:
    """The formatted traceback of ``error`` without the harness's frames around the test's."""
    tb = error.__traceback__
    while tb is not None and _is_harness_frame(tb):
        tb = tb.tb_next
    limit = None
    if isinstance(error, failure_type):
        # Keep the frames up to the first harness frame (the assert method) below the test.
        limit, probe = 0, tb
        while probe is not None and not _is_harness_frame(probe):
            limit += 1
            probe = probe.tb_next
        limit = limit or None
    shown = traceback.TracebackException(type(error), error, tb, limit=limit)
    shown.stack = traceback.StackSummary.from_list(
        [entry for entry, frame in zip(shown.stack, _frames(tb), strict=False)
         if frame.f_globals.get("__name__") != _TRANSPARENT_MODULE])
    return "".join(shown.format())


def _frames(tb: TracebackType | None) -> list[FrameType]:
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def format_user_stack(frame: FrameType | None) -> str:
    """The stack ending at ``frame`` (a running thread's), from the test's first frame inward.

    What comes before the first frame below the outermost run of harness frames (unittest's
    and ours) is left out: the thread's start-up, the runner, the harness that called the test.
    Without harness frames, only the thread's start-up in ``threading`` is left out.
    """
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    frames.reverse()
    harness = [_is_harness_code(f.f_globals) for f in frames]
    if True in harness:
        below = harness.index(True)
        while below < len(frames) and harness[below]:
            below += 1
        frames = frames[below:]
    while frames and frames[0].f_globals.get("__name__") == "threading":
        frames.pop(0)
    frames = [f for f in frames if f.f_globals.get("__name__") != _TRANSPARENT_MODULE]
    summary = traceback.StackSummary.extract((f, f.f_lineno) for f in frames)
    return "".join(summary.format()) or "(no Python frames)\n"
