"""One test in one process: ``TestCase`` (tensor-aware asserts, expecttest, seeding), the
comparison behind ``assertEqual``, ``parametrize``, and small aids a test body uses.

- ``tensor_testcase``: ``TestCase`` and the seed every test starts from;
- ``ranks_testcase``: ``RanksTestCase``, the template of every test case whose methods run on ranks;
- ``comparison``: ``assert_equal``, tensor-aware equality with the path of a mismatch;
- ``parametrize``: ``@parametrize``, ``subtest``, ``decorateIf`` and
  ``instantiate_parametrized_tests``;
- ``temp_paths``: ``TemporaryFileName`` and ``TemporaryDirectoryName``;
- ``output_capture``: ``captured_output``;
- ``serial_mark``: ``serialTest``;
- ``testing_aids``: ``NoTest``, ``suppress_warnings``, ``check_leaked_tensors``,
  ``wrapSwapTensorsTest``, ``get_cycles_per_ms``, ``device_sleep``;
- ``autograd_checks``: ``gradcheck``/``gradgradcheck`` with the test defaults, and
  ``_assertGradAndGradgradChecks``;
- ``hw_classification``: ``HardwareClassification``, a test class's hardware label, and
  ``filter_by_hw_classification``.
"""
