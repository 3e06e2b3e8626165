"""One vocabulary for outcomes (``Status``), JUnit XML, tracebacks and hung ranks' stacks.
Torch-free.

- ``junit_xml``: the ``<testcase>`` elements that ``run_tests`` and the driver both write;
- ``stack_dumps``: a hung rank's faulthandler dump cut down to the test's own stack;
- ``status``: :class:`~torch_testing_ext._engine.reporting.status.Status`, the one vocabulary;
- ``tracebacks``: tracebacks that start at the user's frame (harness frames hidden).
"""
