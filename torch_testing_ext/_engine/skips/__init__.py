"""Every skip decorator and skip exit code, decided in the test process where it can be.

- ``device_skips``: ``skipIf``/``skipXPUIf``/``skipMeta`` & co, skips for one device type;
  ``ops``, which imports and skips (no OpInfo database here);
- ``distributed_skips``: the decorators of ``common_distributed`` (GPU counts, backends...);
- ``inductor_skips``: ``requires_inductor_backend``, the device-generic Inductor guard;
- ``platform_skips``: platform flags and the generic decorators of ``common_utils``;
- ``quantization_skips``: the quantized-engine, oneDNN bf16, Dynamo/Inductor-support and
  torchvision skips of ``common_quantization``;
- ``skip_checks``: skips decided before any rank starts (``skip_when``, ``skip_if``,
  ``pending_skip``, ``skip_or_check_settings``);
- ``skip_codes``: upstream's ``TEST_SKIPS`` exit codes.
"""
