"""The kit's scored report: per area, what was claimed, passed, failed and not claimed.

A :class:`Scorecard` is made from each kit test's outcome (:class:`ItemResult`, gathered from
pytest's reports by ``kit_session``) and renders as Markdown for people or JSON for CI. Every
failure keeps its item, world size and message (the rank, the collective's arguments and the
first wrong element: the headline of its ranks' verdict). The run passes only when every claimed
item passed. Torch-free.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .vocabulary import AREAS, KIT_VERSION

__all__ = ["ItemResult", "Scorecard"]

PASSED, FAILED, NOT_CLAIMED = "passed", "failed", "not claimed"


@dataclasses.dataclass(frozen=True)
class ItemResult:
    """How one item ended in one world: ``passed``, ``failed`` or ``not claimed`` (skipped
    before any rank started: not claimed, or it needs more ranks), with its message."""

    item_id: str
    world_size: int
    outcome: str
    message: str = ""
    seconds: float = 0.0

    @property
    def area(self) -> str:
        return self.item_id.split(".", 1)[0]


@dataclasses.dataclass
class Scorecard:
    """The results of one run of the kit, and what it ran."""

    backend: str
    claims_source: str
    world_sizes: tuple[int, ...]
    torch_version: str
    results: list[ItemResult]
    wall_seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """Every claimed item passed (and at least one was claimed)."""
        claimed = [r for r in self.results if r.outcome != NOT_CLAIMED]
        return bool(claimed) and all(r.outcome == PASSED for r in claimed)

    def areas(self) -> dict[str, dict[str, int]]:
        """Per area (the contract's order): claimed, passed, failed and not claimed counts."""
        table: dict[str, dict[str, int]] = {}
        for area in AREAS:
            mine = [r for r in self.results if r.area == area]
            if not mine:
                continue
            counts = {outcome: sum(r.outcome == outcome for r in mine) for outcome in (PASSED, FAILED, NOT_CLAIMED)}
            table[area] = {"claimed": counts[PASSED] + counts[FAILED], "passed": counts[PASSED],
                           "failed": counts[FAILED], "not claimed": counts[NOT_CLAIMED]}
        return table

    def failures(self) -> list[ItemResult]:
        return [r for r in self.results if r.outcome == FAILED]

    def as_json(self) -> str:
        """The report for CI."""
        return json.dumps({
            "kit_version": KIT_VERSION, "torch_version": self.torch_version, "backend": self.backend,
            "claims": self.claims_source, "world_sizes": list(self.world_sizes), "passed": self.passed,
            "wall_seconds": round(self.wall_seconds, 1), "areas": self.areas(),
            "failures": [{"item": r.item_id, "world_size": r.world_size, "area": r.area, "message": r.message}
                         for r in self.failures()],
            "not_claimed": [{"item": r.item_id, "world_size": r.world_size, "reason": r.message}
                            for r in self.results if r.outcome == NOT_CLAIMED],
        }, indent=2)

    def as_markdown(self, details: bool = True) -> str:
        """The report for people: the verdict, a table of areas, each failure, what was not claimed."""
        verdict = "PASSED: every claimed item passed" if self.passed else \
            f"FAILED: {len(self.failures())} claimed item run(s) failed" if self.failures() else "nothing claimed ran"
        sizes = ", ".join(map(str, self.world_sizes))
        lines = [f"# c10d conformance: {self.backend}", "",
                 f"kit {KIT_VERSION}, torch {self.torch_version}, world sizes {sizes}, claims: {self.claims_source}; "
                 f"{self.wall_seconds:.0f} s", "", f"**{verdict}**", "",
                 "| area | claimed | passed | failed | not claimed |", "|---|---|---|---|---|"]
        totals = {"claimed": 0, "passed": 0, "failed": 0, "not claimed": 0}
        for area, counts in self.areas().items():
            lines.append(f"| {area} | {counts['claimed']} | {counts['passed']} | {counts['failed']} | "
                         f"{counts['not claimed']} |")
            for key in totals:
                totals[key] += counts[key]
        lines.append(f"| **all** | {totals['claimed']} | {totals['passed']} | {totals['failed']} | "
                     f"{totals['not claimed']} |")
        if self.failures():
            lines += ["", "## Failures", ""]
            lines += [f"- `{r.item_id}` (world size {r.world_size}): {_one_line(r.message)}" for r in self.failures()]
        if details:
            reasons: dict[str, int] = {}
            for r in self.results:
                if r.outcome == NOT_CLAIMED:
                    reasons[r.message] = reasons.get(r.message, 0) + 1
            if reasons:
                lines += ["", "## Not claimed", ""]
                lines += [f"- {reason}: {count} item run(s)" for reason, count in sorted(reasons.items())]
        return "\n".join(lines) + "\n"


def _one_line(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    return first if len(first) <= 300 else first[:297] + "..."


def from_json(text: str) -> dict[str, Any]:
    """A JSON report, read back (for tools and self-tests)."""
    return json.loads(text)
