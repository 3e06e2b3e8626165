"""``TestCase`` and what its tests use: tensor-aware asserts, parametrize, seeds, temporary paths.

- ``autograd_checks``: ``gradcheck``/``gradgradcheck`` with the test defaults, and
  ``_assertGradAndGradgradChecks``;
- ``comparison``: ``assert_equal``, tensor-aware equality with the path of a mismatch;
- ``compiler_cache``: inductor's on-disk cache: a directory of the test process, removed when it
  exits;
- ``hw_classification``: ``HardwareClassification``, a test class's hardware label, and
  ``filter_by_hw_classification``;
- ``inductor_checks``: ``_check_has_dynamic_shape`` and ``clone_preserve_strides_offset``, what
  Inductor tests check generated code with and hand to compiled functions;
- ``parametrize``: ``@parametrize``, ``subtest``, ``decorateIf`` and
  ``instantiate_parametrized_tests``;
- ``quantization_case``: ``QuantizationTestCase`` (sample data, graph-node checks), ``NodeSpec``
  and ``override_quantized_engine``;
- ``ranks_testcase``: ``RanksTestCase``, the template of every test case whose methods run on ranks;
- ``temp_paths``: ``TemporaryFileName`` and ``TemporaryDirectoryName``;
- ``tensor_testcase``: ``TestCase`` and the seed every test starts from;
- ``testing_aids``: ``NoTest``, ``suppress_warnings``, ``check_leaked_tensors``,
  ``wrapSwapTensorsTest``, ``get_cycles_per_ms``, ``device_sleep``, ``captured_output``, ``serialTest``.
"""
