"""Device-type tests: one test class per device type, and their decorators and capability gates.

- ``capabilities``: ``Capability`` and ``requires_capabilities``, what a test needs of its
  device type, as each device type's test base declares it;
- ``device_bases``: ``DeviceTypeTestBase`` and which device types a file is instantiated for;
- ``device_decorators``: ``dtypes``, ``onlyCPU``/``onlyCUDA``/``onlyAccelerator``/``onlyOn``,
  ``deviceCountAtLeast``;
- ``device_instantiation``: ``instantiate_device_type_tests``;
- ``float8_types``: ``e4m3_type`` and its largest value, as this machine's devices compute them.
"""
