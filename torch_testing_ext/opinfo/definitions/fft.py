"""Named as in ``torch.testing._internal.opinfo.definitions.fft``: the installed torch's own
module, loaded with its harness imports bound to this package (none of its code is in this
package; see ``_engine/distributed_bases/shipped_suites.py``). The ``fft`` OpInfos."""

from ..._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["op_db", "python_ref_db"]

_load_shipped_module(globals(), "opinfo/definitions/fft.py")
