"""``python -m torch_testing_ext.conformance``: see ``torch_testing_ext._engine.conformance.kit_cli``."""

import sys

from torch_testing_ext._engine.conformance.kit_cli import main

if __name__ == "__main__":
    sys.exit(main())
