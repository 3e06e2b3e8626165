"""The shard driver (``python -m torch_testing_ext.run_test``, this repository's ``run_test.py``):
usable on any tree of test files.

Modules, in the order data flows through them (each imports only modules above it):

- ``usage``: one-line usage errors and warnings (``UsageError``, ``OneLineParser``, ``warn``);
- ``discover``: find the test files of PATHs or a test directory, and apply the selection options;
- ``runners``: how a file runs: ``python FILE`` when its ``__main__`` calls ``run_tests()``, else pytest;
- ``times``: the recorded times file (``.test-times.json``): load, save, merge;
- ``plan``: the pure planner that splits files (and big files by class) into shards;
- ``processes``: one test file's process in its own session, killed as a whole tree;
- ``listing``: ``python test/x.py --list`` for the files the planner may split;
- ``results``: attempts, flaky and consistent failures, in ``reporting.status.Status`` terms;
- ``file_reports``: reads each process's JUnit XML, writes the merged report per test file;
- ``measure``: ``--update-times``: the times a run's reports measured, merged into the file;
- ``execute``: runs a shard's entries (parallel/serial, timeouts, reruns, fail-fast);
- ``report``: the plan listing, progress lines and the final summary;
- ``cli``: the command line that ties them together (``main``).

Nothing here imports torch: the driver starts in a fraction of a second. This package
imports none of its modules; ``torch_testing_ext.run_test`` imports ``cli.main``.
"""
