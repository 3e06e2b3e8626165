"""The shard driver behind ``run_test.py``: usable on any tree of ``test_*.py`` files.

Modules, in the order data flows through them:

- ``discover``: find test files and apply the selection options;
- ``times``: the recorded times file (``.test-times.json``) and ``--update-times``;
- ``plan``: the pure planner that splits files (and big files by class) into shards;
- ``processes``: one test process in its own session, killed as a whole tree;
- ``execute``: runs a shard's entries (parallel/serial, timeouts, reruns, fail-fast);
- ``results``: the outcome vocabulary (attempts, flaky and consistent failures);
- ``junit``: reads each file's JUnit XML and writes the merged report per test file;
- ``report``: the plan listing, progress lines and the final summary;
- ``cli``: the command line that ties them together (``main``).

Nothing here imports torch: the driver starts in a fraction of a second.
"""

from .cli import main

__all__ = ["main"]
