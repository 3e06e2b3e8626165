"""How tests, ranks and test processes ended, and how that is written as JUnit XML.

Torch-free, so the shard driver can use it without importing torch:

- ``status``: :class:`~torch_testing_ext.reporting.status.Status`, the one vocabulary;
- ``junit_xml``: the ``<testcase>`` elements that ``run_tests`` and the driver both write;
- ``tracebacks``: tracebacks that start at the user's frame (harness frames hidden);
- ``stack_dumps``: a hung rank's faulthandler dump cut down to the test's own stack.
"""
