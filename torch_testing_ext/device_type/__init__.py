"""Device-type tests: a generic test class instantiated once per device type (CPU, the
machine's accelerator, a PrivateUse1 backend), as ``common_device_type`` does upstream.

- ``device_bases``: ``DeviceTypeTestBase`` and which device types a file is instantiated for;
- ``device_decorators``: ``dtypes``, ``onlyCPU``/``onlyCUDA``/``onlyAccelerator``/``onlyOn``,
  ``deviceCountAtLeast``;
- ``device_instantiation``: ``instantiate_device_type_tests``;
- ``device_skips``: ``skipIf``/``skipXPUIf``/``skipMeta`` & co, skips for one device type;
  ``ops``, which imports and skips (no OpInfo database here);
- ``capabilities``: ``Capability`` and ``requires_capabilities``, what a test needs of its
  device type, as each device type's test base declares it;
- ``float8_types``: ``e4m3_type`` and its largest value, as this machine's devices compute them.
"""
