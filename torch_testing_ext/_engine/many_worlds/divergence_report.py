"""How a test across worlds whose values part reads: the first divergence, then a table.

::

    the worlds disagree: 'loss' step 0: world 2 differs from world 1 (the reference)
    first divergence, in execution order: 'loss' step 0, compared at test_ddp.py:21
      world 1 (reference): tensor([0.6931], float64)
      world 2:             tensor([1.3863], float64)
      Tensor-likes are not close! ...
    'loss', largest absolute difference from world 1 per step (* beyond the tolerances):
      step    world 2    world 4
         0  6.93e-01*  2.08e+00*
         1  ...
    other names that part: 'weight' from step 1

A row per step (at most :data:`MAX_ROWS`: the steps around the first divergence and the last),
a column per world.
"""

from __future__ import annotations

from collections.abc import Sequence

from .divergence import Divergence, StepCell, WorldRecords, names_that_differ, step_table

__all__ = ["divergence_report", "MAX_ROWS"]

MAX_ROWS = 12


def _cell(cell: StepCell | None) -> str:
    if cell is None or not cell.recorded:
        return "-"
    if cell.largest is None:
        text = "differs"
    elif cell.largest == 0:
        text = "0"
    else:
        text = f"{cell.largest:.2e}"
    return text + ("*" if cell.beyond else " ")


def _rows(steps: list[int], first: int) -> list[int | None]:
    """The steps to show (None: a gap), at most MAX_ROWS of them."""
    if len(steps) <= MAX_ROWS:
        return list(steps)
    at = steps.index(first) if first in steps else 0
    start = max(0, min(at - 2, len(steps) - MAX_ROWS))
    shown: list[int | None] = list(steps[start:start + MAX_ROWS - 2])
    if start > 0:
        shown.insert(0, None)
    if steps[-1] not in shown:
        shown += [None, steps[-1]]
    return shown


def _table(worlds: Sequence[WorldRecords], divergence: Divergence, rtol: float | None, atol: float | None) -> str:
    table = step_table(worlds, divergence.name, rtol, atol)
    columns = sorted({size for row in table.values() for size in row}, key=[w.size for w in worlds].index)
    if not table or not columns:
        return ""
    heads = [f"world {size}" for size in columns]
    widths = [max(len(head), 10) for head in heads]
    lines = [f"{divergence.name!r}, largest absolute difference from world {worlds[0].size} per step "
             "(* beyond the tolerances, - not recorded):",
             "  step  " + "  ".join(f"{head:>{width}}" for head, width in zip(heads, widths, strict=True))]
    for step in _rows(sorted(table), divergence.step):
        if step is None:
            lines.append("   ...")
            continue
        cells = [_cell(table[step].get(size)) for size in columns]
        row = "  ".join(f"{cell:>{width}}" for cell, width in zip(cells, widths, strict=True))
        lines.append(f"  {step:>4}  {row}")
    return "\n".join(lines)


def divergence_report(worlds: Sequence[WorldRecords], divergence: Divergence, rtol: float | None = None,
                      atol: float | None = None) -> str:
    """The whole report of ``divergence`` among ``worlds`` (the reference first); its first line
    is the one-line summary."""
    tolerances = "assert_close's defaults for the dtype" if rtol is None else f"rtol={rtol:g}, atol={atol:g}"
    lines = [f"the worlds disagree: {divergence.summary}",
             f"first divergence, in execution order: {divergence.name!r} step {divergence.step}, compared at "
             f"{divergence.line} (tolerances: {tolerances})"]
    if divergence.detail:
        lines.append(divergence.detail)
    table = _table(worlds, divergence, rtol, atol)
    if table:
        lines.append(table)
    others = [(name, step) for name, step in names_that_differ(worlds, rtol, atol) if name != divergence.name]
    if others:
        lines.append("other names that part: " + ", ".join(f"{name!r} from step {step}" for name, step in others[:8])
                     + (f" and {len(others) - 8} more" if len(others) > 8 else ""))
    return "\n".join(lines)
