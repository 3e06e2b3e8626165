"""``TestCase`` and what its tests use: tensor-aware asserts, parametrize, seeds, temporary paths.

- ``autograd_checks``: ``gradcheck``/``gradgradcheck`` with the test defaults, and
  ``_assertGradAndGradgradChecks``;
- ``comparison``: ``assert_equal``, tensor-aware equality with the path of a mismatch;
- ``compiler_cache``: inductor's on-disk cache: a directory of the test process, removed when it
  exits;
- ``numpy_dtypes``: NumPy's dtypes and torch's, both ways;
- ``hw_classification``: ``HardwareClassification``, a test class's hardware label, and
  ``filter_by_hw_classification``;
- ``inductor_checks``: ``_check_has_dynamic_shape`` and ``clone_preserve_strides_offset``, what
  Inductor tests check generated code with and hand to compiled functions;
- ``parametrize``: ``@parametrize``, ``subtest``, ``decorateIf`` and
  ``instantiate_parametrized_tests``;
- ``quantization_case``: ``QuantizationTestCase`` (sample data, graph-node checks) and
  ``NodeSpec``;
- ``ranks_testcase``: ``RanksTestCase``, the template of every test case whose methods run on ranks;
- ``tensor_factories``: ``noncontiguous_like`` and matrices of a property (positive-definite,
  well-conditioned, full rank with distinct singular values);
- ``temp_paths``: ``TemporaryFileName`` and ``TemporaryDirectoryName``;
- ``tensor_testcase``: ``TestCase`` and the seed every test starts from;
- ``tracked_inputs``: ``TrackedInputIter``, which seeds and records the sample input a test is on;
- ``testing_aids``: ``NoTest``, ``suppress_warnings``, ``check_leaked_tensors``,
  ``wrapSwapTensorsTest``, ``get_cycles_per_ms``, ``device_sleep``, ``captured_output``, ``serialTest``.
"""
