"""Under a launcher, each rank's pytest writes its own JUnit XML.

Under ``torchrun`` every rank runs the same pytest command line, so ``--junitxml=x.xml``
would make each rank overwrite the others' file; the ranks other than 0 write
``x-rank<N>.xml`` instead. The package's pytest plugin (entry point ``torch_testing_ext``)
does this in every run; this module is also a plugin of its own, for runs without plugin
autoloading (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``)::

    torchrun --nproc-per-node 2 -m pytest -p torch_testing_ext.launcher.pytest_ranks \\
        --junitxml=reports/x.xml test_x.py

Without a launcher it changes nothing. Torch-free.
"""

from __future__ import annotations

import pytest

from .._engine.launched.launched_reports import rank_report_path
from .._engine.launched.launcher_env import launched_rank

__all__: list[str] = []  # a plugin (``-p``): nothing here is for importing

__unittest = True

_SUFFIXED = pytest.StashKey[bool]()


def give_junitxml_rank_suffix(config: pytest.Config) -> None:
    """Give ``--junitxml`` this launched rank's suffix, once per run, before pytest's junitxml
    plugin opens the file; nothing without a launcher."""
    if config.stash.get(_SUFFIXED, False):
        return
    config.stash[_SUFFIXED] = True
    path = getattr(config.option, "xmlpath", None)
    if path:
        config.option.xmlpath = rank_report_path(path, launched_rank())


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The rank's suffix for ``--junitxml``."""
    give_junitxml_rank_suffix(config)
