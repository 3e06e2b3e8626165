"""The shard driver: run test files each in its own process, as one shard of a sharded run.

::

    python -m torch_testing_ext.run_test                  # every test_*.py under ./test
    python -m torch_testing_ext.run_test tests/ -j 2      # a directory (or files), as pytest takes them
    python -m torch_testing_ext.run_test tests/ --shard 2 3 --keep-going
    tte-run-test tests/ --dry-run --shard 1 3             # the same, as a console script

A file whose ``__main__`` calls ``run_tests()`` runs as ``python FILE``; any other test file
runs under pytest. ``--help`` lists every option; the package's ``docs/driver.md`` explains
sharding, reruns, timeouts and reports. The driver never imports torch.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ._engine.driver.cli import main as _main

__all__ = ["main", "console_main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the driver's command line ``argv`` (default ``sys.argv[1:]``) from the current
    directory; returns the exit status."""
    return _main(argv)


def console_main() -> None:
    """The ``tte-run-test`` console script."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
