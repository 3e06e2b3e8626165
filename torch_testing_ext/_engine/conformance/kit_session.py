"""The kit in a pytest session: its options, its settings handed to the ranks, the circuit
breaker for a stuck area, and the scored report.

- ``--c10d-...`` options (:func:`add_options`); :func:`configure` checks them (a bad one is a
  usage error, one line) and puts them in the environment, where the ranks' sessions read them;
- a broken backend ends in minutes, not hours: after :data:`TIMEOUTS_PER_AREA` items of one area
  timed out in one world size, the area's other items fail at once, without running, saying why
  (:func:`before_item`);
- every kit test's outcome is gathered (:func:`record`) into a :class:`~.scorecard.Scorecard`,
  written to ``--c10d-report FILE.md|FILE.json`` and summed up at the end of pytest's output.

Torch-free until the session ends (the scorecard reads the backend's claims then).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from ..worlds.settings import SettingError
from .kit_ids import item_of
from .kit_settings import OPTIONS, KitSettings, checked_settings, to_environment
from .scorecard import FAILED, NOT_CLAIMED, PASSED, ItemResult, Scorecard

__all__ = ["TIMEOUTS_PER_AREA", "KitPlugin", "add_options", "configure", "before_item", "record",
           "scorecard", "finish", "summary_lines"]

TIMEOUTS_PER_AREA = 3
_SETTINGS = pytest.StashKey[KitSettings]()
_RESULTS = pytest.StashKey[dict[str, ItemResult]]()
_TIMEOUTS = pytest.StashKey[dict[tuple[int, str], int]]()
_STARTED = pytest.StashKey[float]()


def add_options(parser: pytest.Parser) -> None:
    """The kit's options (``pytest --c10d-backend gloo --pyargs torch_testing_ext.conformance``)."""
    group = parser.getgroup("torch_testing_ext conformance", "the conformance kit for c10d backends")
    group.addoption(OPTIONS["backend"], metavar="NAME", help="run the kit on this backend (gloo, threaded, fake, ...)")
    group.addoption(OPTIONS["import_module"], metavar="MODULE", help="import MODULE first: it registers the backend")
    group.addoption(OPTIONS["claims"], metavar="NAME|FILE", help="borrow a shipped manifest or read one (JSON)")
    group.addoption(OPTIONS["device"], metavar="TYPE", help="the device type the items use (default: the claims')")
    group.addoption(OPTIONS["world_sizes"], metavar="N,M", help="the world sizes (default: 2)")
    group.addoption(OPTIONS["only"], metavar="AREA", action="append", default=[], help="only this area (repeatable)")
    group.addoption(OPTIONS["item_timeout"], metavar="SECONDS", help="seconds each item has (default: 20)")
    group.addoption(OPTIONS["report"], metavar="FILE", help="write the scored report to FILE.md or FILE.json")


def configure(config: pytest.Config) -> None:
    """Check the kit's options, if given, and hand them to the ranks through the environment."""
    backend = config.getoption(OPTIONS["backend"].lstrip("-").replace("-", "_"), None)
    if backend is None:
        return
    option = {name: config.getoption(flag.lstrip("-").replace("-", "_"), None) for name, flag in OPTIONS.items()}
    only = tuple(area for value in option["only"] or () for area in str(value).split(",") if area)
    try:
        settings = checked_settings(backend, option["import_module"], option["claims"], option["device"],
                                    option["world_sizes"], only, option["item_timeout"], option["report"])
    except SettingError as error:
        raise pytest.UsageError(f"torch_testing_ext conformance: {error}") from None
    os.environ.update(to_environment(settings))
    config.stash[_SETTINGS] = settings
    config.stash[_RESULTS] = {}
    config.stash[_TIMEOUTS] = {}
    config.stash[_STARTED] = time.monotonic()
    config.pluginmanager.register(KitPlugin(config), "torch_testing_ext-conformance")
    from .pytest_kit import kit_of  # (torch, now that the kit runs)

    kit_of(config)  # the backend, its module and its claims: a problem is a usage error now


class KitPlugin:
    """The hooks of a session that runs the kit: the breaker, the scorecard, the report."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        before_item(item)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record(self.config, report)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        lines = summary_lines(self.config)
        if lines:
            terminalreporter.section("c10d conformance")
            for line in lines:
                terminalreporter.write_line(line)

    def pytest_sessionfinish(self) -> None:
        finish(self.config)


def _area(item_id: str) -> str:
    return item_id.split(".", 1)[0]


def before_item(item: pytest.Item) -> None:
    """Fail a kit item at once, without running it, when its area timed out too often here."""
    timeouts = item.config.stash.get(_TIMEOUTS, None)
    found = item_of(item.nodeid)
    if timeouts is None or found is None:
        return
    if item.get_closest_marker("skip") is not None:  # not claimed: skipped, not failed
        return
    size, item_id = found
    count = timeouts.get((size, _area(item_id)), 0)
    if count >= TIMEOUTS_PER_AREA:
        pytest.fail(f"not run: {count} items of the area {_area(item_id)} timed out at world size {size}, so the "
                    "rest of the area fails without running", pytrace=False)


def _message(report: pytest.TestReport) -> str:
    crash: Any = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None) if crash is not None else None
    if message:
        return str(message).replace("torch_testing_ext.conformance.ContractFailure", "ContractFailure") \
            .removeprefix("Failed: ")
    if isinstance(report.longrepr, tuple):  # a skip: (path, line, "Skipped: why")
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return report.longreprtext.strip().removeprefix("Failed: ")


def record(config: pytest.Config, report: pytest.TestReport) -> None:
    """Keep how a kit test ended (its worst phase), and count its area's timeouts."""
    results = config.stash.get(_RESULTS, None)
    found = item_of(report.nodeid)
    if results is None or found is None:
        return
    size, item_id = found
    if report.skipped and report.when == "setup":
        outcome = NOT_CLAIMED
    elif report.failed or report.skipped:  # a claimed item that skipped in its ranks proved nothing
        outcome = FAILED
    elif report.when == "call":
        outcome = PASSED
    else:
        return
    message = _message(report) if outcome != PASSED else ""
    if outcome == FAILED and report.skipped:
        message = f"claimed, but its ranks skipped: {message}"
    earlier = results.get(report.nodeid)
    if earlier is None or earlier.outcome == PASSED:
        results[report.nodeid] = ItemResult(item_id, size, outcome, message, report.duration)
    if outcome == FAILED and report.when == "call" and "timed out" in message:
        timeouts = config.stash[_TIMEOUTS]
        timeouts[(size, _area(item_id))] = timeouts.get((size, _area(item_id)), 0) + 1


def scorecard(config: pytest.Config) -> Scorecard | None:
    """The session's scorecard (None when it did not run the kit)."""
    settings = config.stash.get(_SETTINGS, None)
    if settings is None:
        return None
    from importlib.metadata import version

    from .pytest_kit import kit_of

    kit = kit_of(config) if config.stash.get(_RESULTS, {}) else None
    source = kit[1].source if kit else "(no item ran)"
    return Scorecard(settings.backend, source, settings.world_sizes, version("torch"),
                     list(config.stash[_RESULTS].values()), time.monotonic() - config.stash[_STARTED])


def finish(config: pytest.Config) -> None:
    """Write the scored report where ``--c10d-report`` says."""
    settings = config.stash.get(_SETTINGS, None)
    if settings is None or not settings.report:
        return
    card = scorecard(config)
    assert card is not None, "a session with settings has a scorecard"
    path = Path(settings.report)
    path.write_text(card.as_json() if path.suffix == ".json" else card.as_markdown())


def summary_lines(config: pytest.Config) -> list[str]:
    """The scorecard's table, for the end of pytest's output (nothing when the kit did not run)."""
    card = scorecard(config)
    if card is None or not card.results:
        return []
    return card.as_markdown(details=False).splitlines()

