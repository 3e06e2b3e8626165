"""Named as in ``torch.testing._internal.opinfo.definitions._masked``: the installed torch's own
module, loaded with its harness imports bound to this package (none of its code is in this
package; see ``_engine/distributed_bases/shipped_suites.py``). The ``_masked`` OpInfos."""

from ..._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["op_db"]

_load_shipped_module(globals(), "opinfo/definitions/_masked.py")
