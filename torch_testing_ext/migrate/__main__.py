"""``python -m torch_testing_ext.migrate``: see :mod:`torch_testing_ext._engine.migrate.migrate_cli`."""

import sys

from .._engine.migrate.migrate_cli import main

if __name__ == "__main__":
    sys.exit(main())
