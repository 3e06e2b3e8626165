"""Named as in ``torch.testing._internal.opinfo.definitions``: the installed torch's own module,
loaded with its harness imports bound to this package (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). The OpInfos defined outside
``common_methods_invocations``, gathered from ``fft``, ``linalg``, ``signal``, ``special`` and
``_masked``; ``nested`` (NJT OpInfos) and ``sparse`` (sparse sample inputs) are beside them."""

from ..._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["op_db", "python_ref_db"]

_load_shipped_module(globals(), "opinfo/definitions/__init__.py")
