"""The hooks of the ``torch_testing_ext`` pytest plugin (see the package's docstring).

- **Settings** (``pytest_configure``): every environment variable the harness reads is checked
  before any test is collected; a bad one is a usage error, one line and exit status 4::

      ERROR: torch_testing_ext: TORCH_TESTING_EXT_TIMEOUT='abc': expected a positive number of seconds

- **Launcher** (``pytest_configure``): under ``torchrun`` every rank runs the same command line,
  so ``--junitxml=x.xml`` becomes ``x-rank<N>.xml`` on every rank but 0.
- **Rank failures** (``pytest_runtest_makereport``): a test whose ranks did not all pass is
  reported from the ranks' own tracebacks, without the harness's frames
  (:mod:`.rank_failure_report`); ``--fulltrace`` shows everything as usual.
- **Tests on ranks** (``@pytest.mark.world_size``): several sizes make one test each, and
  the marked tests run on their ranks (:mod:`.ranks_function`) with the fixtures ``rank``,
  ``world_size``, ``device``, ``backend`` and ``process_group`` (:mod:`.rank_fixtures`). A
  marker the harness cannot use is an error of its own test (one line naming every bad
  argument), not of the file's collection. A launched rank's fixture teardown that leaves by
  ``sys.exit()``, ``pytest.exit()`` or ``KeyboardInterrupt`` is an error naming the rank.
- **The conformance kit** (``--c10d-backend NAME --pyargs torch_testing_ext.conformance``): its
  options, checked, and its session plugin (``_engine.conformance.kit_session``).
- **Tests across worlds** (``@pytest.mark.worlds(1, 2, 4)``): one test that runs in a world
  of each size, with the process group up in every rank and the ``compare`` fixture; it passes
  only if every world passed and every compared value agrees (``_engine.many_worlds``).
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any, Literal

import pytest

from .._engine.conformance import kit_session
from .._engine.launched.launcher_env import check_every_setting
from .._engine.many_worlds.worlds_spec import WORLDS_MARK_NAME
from .._engine.pytest_native.item_state import KEPT_WORLDS, NEXT_KEY
from .._engine.pytest_native.rank_failure_report import rank_failure_longrepr
from .._engine.pytest_native.rank_fixtures import (  # noqa: F401  # fixtures pytest finds here
    backend,
    compare,
    device,
    process_group,
    rank,
    world_size,
)
from .._engine.pytest_native.ranks_function import (
    WORLDS_MARK_HELP,
    LaunchedRanksFunction,
    closest_mark,
    is_ranks_item,
    launched_teardown,
    make_ranks_items,
    usable_mark,
)
from .._engine.pytest_native.subtest_reports import plain_subtest_arguments
from .._engine.pytest_native.world_size_mark import MARK_HELP, MARK_NAME, size_id
from .._engine.worlds.settings import SettingError
from ..launcher.pytest_ranks import give_junitxml_rank_suffix

__all__: list[str] = []  # a plugin: pytest finds its hooks; nothing here is for importing

__unittest = True  # the harness's frames: left out of a rank's traceback


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Check the harness's settings (a bad one is a usage error), then the rank suffix; the
    ``world_size`` marker."""
    try:
        check_every_setting()
    except SettingError as error:
        raise pytest.UsageError(f"torch_testing_ext: {error}") from None
    give_junitxml_rank_suffix(config)
    config.addinivalue_line("markers", MARK_HELP)
    config.addinivalue_line("markers", WORLDS_MARK_HELP)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The conformance kit, when its options are given: checked (a usage error) before collection."""
    kit_session.configure(session.config)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The conformance kit's options (``--c10d-backend NAME``...)."""
    kit_session.add_options(parser)



@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Report a test whose ranks did not all pass from its ranks' tracebacks."""
    report = yield
    if call.excinfo is not None and report.failed and not item.config.getoption("fulltrace", False):
        longrepr = rank_failure_longrepr(call.excinfo)
        if longrepr is not None:
            report.longrepr = longrepr
    if report.skipped and is_ranks_item(item) and isinstance(report.longrepr, tuple):
        # The ranks' skip is raised by the harness: report it at the test, as a skip mark is.
        path, line, _ = item.reportinfo()
        report.longrepr = (str(path), (line or 0) + 1, report.longrepr[2])
    return report


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Generator[None, Any, Any]:
    """Check a test function's ``world_size`` marker; one with several sizes takes the
    ``world_size`` fixture, so that each size can be a test of its own. A test across worlds
    takes the ``process_group`` fixture: the group is up in each of its ranks."""
    if inspect.isfunction(obj) and closest_mark(collector, obj, WORLDS_MARK_NAME) is not None:
        pytest.mark.usefixtures("process_group")(obj)
        return (yield)
    mark = closest_mark(collector, obj) if inspect.isfunction(obj) else None
    checked = usable_mark(collector.config, mark) if mark is not None else None
    if checked is not None and len(checked.sizes) > 1:
        pytest.mark.usefixtures("world_size")(obj)
    return (yield)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per size of a ``world_size`` marker with several (``test_x[2ranks]``)."""
    mark = metafunc.definition.get_closest_marker(MARK_NAME)
    if mark is None or metafunc.definition.get_closest_marker(WORLDS_MARK_NAME) is not None:
        return
    checked = usable_mark(metafunc.config, mark)
    if checked is not None and len(checked.sizes) > 1:
        # On kept ranks, all tests of one size run together (one world each), not by test.
        kept_scope: Literal["class", "module"] = "class" if metafunc.cls is not None else "module"
        metafunc.parametrize("world_size", checked.sizes, ids=size_id,
                             scope=kept_scope if checked.ranks == "kept" else None)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marked tests become tests on ranks (before ``-k`` and ``-m`` select among them)."""
    make_ranks_items(items)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    """A launched test's fixtures that leave their teardown early: an error naming the rank."""
    if isinstance(item, LaunchedRanksFunction):
        return (yield from launched_teardown())
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    """Tell a test which one runs next (a kept world closes after the last test of its scope)."""
    item.stash[NEXT_KEY] = nextitem
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(report: pytest.TestReport) -> Generator[None, Any, Any]:
    """A subtest's report, with its arguments as plain values (see ``subtest_reports``)."""
    return plain_subtest_arguments((yield))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Close the kept worlds a run left open (it stopped early)."""
    if session.config.stash.get(KEPT_WORLDS, None):
        from .._engine.pytest_native.pytest_worlds import close_kept_worlds

        close_kept_worlds(session.config)
