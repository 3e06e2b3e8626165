"""A pytest plugin for runs under a launcher: each rank writes its own JUnit XML.

Under ``torchrun`` every rank runs the same pytest command line, so ``--junitxml=x.xml``
would make each rank overwrite the others' file. With this plugin the ranks other than 0 write
``x-rank<N>.xml`` instead::

    torchrun --nproc-per-node 2 -m pytest -p torch_testing_ext.launcher.pytest_ranks \\
        --junitxml=reports/x.xml test_x.py

Without a launcher it changes nothing. Torch-free.
"""

from __future__ import annotations

from typing import Any

import pytest

from .launched_reports import rank_report_path
from .launched_world import launched_rank

__all__ = ["pytest_configure"]

__unittest = True


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: Any) -> None:
    """Give ``--junitxml`` the rank's suffix before pytest's junitxml plugin opens it."""
    path = getattr(config.option, "xmlpath", None)
    if path:
        config.option.xmlpath = rank_report_path(path, launched_rank())
