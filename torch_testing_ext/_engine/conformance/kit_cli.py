"""``python -m torch_testing_ext.conformance``: the kit on one backend, and its scored report.

::

    python -m torch_testing_ext.conformance --backend NAME [--import MODULE] [--claims NAME|FILE]
        [--device TYPE] [--world-sizes 2,3,4] [--only AREA ...] [-k EXPRESSION] [--item-timeout S]
        [--report FILE.md|FILE.json] [--list]

It runs the kit's pytest tests (``torch_testing_ext.conformance``) in this process, isolated
from the current directory's pytest configuration, prints the scored report (Markdown) and
writes it where ``--report`` says. Exit status: 0 when every claimed item passed, 1 when one did
not, 2 for bad input (one line on stderr, nothing run). ``--list`` prints every item and
whether it is claimed, and runs nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..worlds.settings import SettingError
from .kit_settings import OPTIONS, checked_settings
from .vocabulary import AREAS, KIT_VERSION

__all__ = ["main", "parser"]

_PASSED, _FAILED, _USAGE = 0, 1, 2
# The command line's name of each setting (pytest's are OPTIONS').
_FLAGS = {"backend": "--backend", "import_module": "--import", "claims": "--claims", "device": "--device",
          "world_sizes": "--world-sizes", "only": "--only", "item_timeout": "--item-timeout", "report": "--report"}


def parser() -> argparse.ArgumentParser:
    """The command line's arguments."""
    made = argparse.ArgumentParser(prog="python -m torch_testing_ext.conformance",
                                   description=f"The conformance kit for c10d backends (kit {KIT_VERSION}): "
                                               "what a backend claims, checked and scored.")
    made.add_argument("--backend", required=True, metavar="NAME",
                      help="the backend to check: gloo, threaded, fake, or one --import registers")
    made.add_argument("--import", dest="import_module", metavar="MODULE",
                      help="a module to import first; it registers the backend (and may define CONFORMANCE_CLAIMS)")
    made.add_argument("--claims", metavar="NAME|FILE", help="borrow a shipped manifest (gloo, threaded, fake) or "
                                                            "read one from a JSON file")
    made.add_argument("--device", metavar="TYPE", help="the device type the items use (default: the claims' first)")
    made.add_argument("--world-sizes", default="2", metavar="N,M", help="world sizes, comma-separated (default: 2)")
    made.add_argument("--only", nargs="+", default=[], metavar="AREA", choices=list(AREAS),
                      help=f"only these areas: {', '.join(AREAS)}")
    made.add_argument("-k", dest="select", metavar="EXPRESSION",
                      help="only the items whose ids match, as pytest's -k (\"all_reduce and not float16\")")
    made.add_argument("--item-timeout", metavar="SECONDS", help="seconds each item has on all ranks (default: 20)")
    made.add_argument("--report", metavar="FILE", help="also write the report to FILE.md or FILE.json")
    made.add_argument("--list", action="store_true", help="list the items and whether each is claimed; run nothing")
    return made


def _pytest_arguments(args: argparse.Namespace, report: str) -> list[str]:
    options = ["--pyargs", "torch_testing_ext.conformance", "-p", "no:cacheprovider", "--noconftest",
               "-o", "addopts=", "-q", "--tb=no", "--no-summary", "--rootdir", str(Path(__file__).resolve().parent),
               "--c10d-backend", args.backend, "--c10d-world-sizes", args.world_sizes, "--c10d-report", report]
    for flag, value in (("--c10d-import", args.import_module), ("--c10d-claims", args.claims),
                        ("--c10d-device", args.device), ("--c10d-item-timeout", args.item_timeout)):
        if value:
            options += [flag, value]
    for area in args.only:
        options += ["--c10d-only", area]
    if args.select:
        options += ["-k", args.select]
    if args.list:
        options += ["--collect-only", "-q"]
    return options


class _Card:
    """Keeps the session's scorecard (the plugin of this run)."""

    card: Any = None

    def pytest_sessionfinish(self, session: Any) -> None:
        from .kit_session import scorecard

        self.card = scorecard(session.config)

    def pytest_collection_finish(self, session: Any) -> None:
        self.items = [item.nodeid for item in session.items]
        self.skips = {item.nodeid: next((mark.kwargs.get("reason", "") for mark in item.iter_markers("skip")), None)
                      for item in session.items}


def _list(card: _Card) -> None:
    from .kit_ids import item_of

    for nodeid in card.items:
        found = item_of(nodeid)
        if found is None:
            continue
        size, item_id = found
        reason = card.skips.get(nodeid)
        print(f"{size} ranks  {item_id}  {'claimed' if reason is None else reason}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the kit as the arguments say; the exit status."""
    args = parser().parse_args(argv)
    try:
        settings = checked_settings(args.backend, args.import_module, args.claims, args.device, args.world_sizes,
                                    tuple(args.only), args.item_timeout, args.report)
        from .pytest_kit import KitError, resolve

        try:
            resolve(settings, _FLAGS)
        except KitError as error:
            raise SettingError(str(error)) from None
    except SettingError as error:
        message = str(error)
        for option, flag in OPTIONS.items():
            message = message.replace(flag, _FLAGS[option])
        print(f"python -m torch_testing_ext.conformance: error: {message}", file=sys.stderr)
        return _USAGE
    import pytest

    card = _Card()
    with tempfile.TemporaryDirectory(prefix="tte-conformance-") as temp:
        status = pytest.main(_pytest_arguments(args, os.path.join(temp, "report.json")), plugins=[card])
    if status == pytest.ExitCode.USAGE_ERROR or card.card is None:
        return _USAGE
    if args.list:
        _list(card)
        return _PASSED
    print()
    print(card.card.as_markdown())
    if args.report:
        path = Path(args.report)
        path.write_text(card.card.as_json() if path.suffix == ".json" else card.card.as_markdown())
        print(f"report written to {path}")
    return _PASSED if card.card.passed else _FAILED
