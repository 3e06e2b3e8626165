"""The self-suite's folders mirror the package's; each file imports its helpers as ``fixtures``.

pytest puts this directory (the first above a test file without an ``__init__.py``) on
``sys.path`` when it loads this conftest, so ``from fixtures import ...`` works in every folder.
The self-tests therefore run under pytest (``python -m pytest test/harness/...``; the driver
runs a file without a ``run_tests()`` main block under pytest).
"""
