"""Named as in ``torch.testing._internal.common_quantized``: the installed torch's own module,
loaded with its harness imports bound to this package (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). Quantization helpers (``_quantize``,
``override_quantized_engine``, ...) that sample inputs use."""

from ._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["override_quantized_engine", "override_qengines", "supported_qengines", "qengine_is_fbgemm",
           "qengine_is_qnnpack", "qengine_is_onednn"]

_load_shipped_module(globals(), "common_quantized.py")
