#!/usr/bin/env python3
"""Run the test suite the way CI does: every test file in its own process, sharded by time.

    python run_test.py                       # every test file under test/
    python run_test.py --shard 2 3 -j 2      # shard 2 of 3, two non-distributed files at once
    python run_test.py --dry-run --shard 1 3 # print the plan, run nothing
    python run_test.py --update-times        # refresh .test-times.json from test-reports/

``python run_test.py --help`` lists every option; docs/driver.md explains the contract.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package

from torch_testing_ext._engine.driver.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], root=ROOT))
