"""Device-type tests: one test class per device type, and their decorators and capability gates.

- ``capabilities``: ``Capability`` and ``requires_capabilities``, what a test needs of its
  device type, as each device type's test base declares it;
- ``cuda_settings``: ``TEST_CUDNN``, MAGMA's version, ``tf32_off``/``with_tf32_off``;
- ``device_bases``: ``DeviceTypeTestBase`` and which device types a file is instantiated for;
- ``device_decorators``: ``dtypes``, ``onlyCPU``/``onlyCUDA``/``onlyAccelerator``/``onlyOn``,
  ``onlyNativeDeviceTypes``, ``deviceCountAtLeast``, ``disablecuDNN``;
- ``device_instantiation``: ``instantiate_device_type_tests``;
- ``float8_types``: ``e4m3_type``, ``e5m2_type`` and their largest values, as this machine's
  devices compute them;
- ``op_tests``: ``ops`` and ``OpDTypes``, one test per OpInfo and dtype;
- ``tolerances``: ``tol``, ``toleranceOverride`` and ``precisionOverride``.
"""
