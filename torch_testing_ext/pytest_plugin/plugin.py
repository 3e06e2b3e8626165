"""The hooks of the ``torch_testing_ext`` pytest plugin (see the package's docstring).

- **Settings** (``pytest_configure``): every environment variable the harness reads is checked
  before any test is collected; a bad one is a usage error, one line and exit status 4::

      ERROR: torch_testing_ext: TORCH_TESTING_EXT_TIMEOUT='abc': expected a positive number of seconds

- **Launcher** (``pytest_configure``): under ``torchrun`` every rank runs the same command line,
  so ``--junitxml=x.xml`` becomes ``x-rank<N>.xml`` on every rank but 0.
- **Rank failures** (``pytest_runtest_makereport``): a test whose ranks did not all pass is
  reported from the ranks' own tracebacks, without the harness's frames
  (:mod:`.rank_failure_report`); ``--fulltrace`` shows everything as usual.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ..launcher.pytest_ranks import give_junitxml_rank_suffix
from ..ranks.launcher_env import check_every_setting
from ..ranks.settings import SettingError
from .rank_failure_report import rank_failure_longrepr

__all__ = ["pytest_configure", "pytest_runtest_makereport"]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Check the harness's settings (a bad one is a usage error), then the rank suffix."""
    try:
        check_every_setting()
    except SettingError as error:
        raise pytest.UsageError(f"torch_testing_ext: {error}") from None
    give_junitxml_rank_suffix(config)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Report a test whose ranks did not all pass from its ranks' tracebacks."""
    report = yield
    if call.excinfo is not None and report.failed and not item.config.getoption("fulltrace", False):
        longrepr = rank_failure_longrepr(call.excinfo)
        if longrepr is not None:
            report.longrepr = longrepr
    return report
