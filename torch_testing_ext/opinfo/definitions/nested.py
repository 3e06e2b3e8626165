"""Named as in ``torch.testing._internal.opinfo.definitions.nested``: the installed torch's own
module, loaded with its harness imports bound to this package (none of its code is in this
package; see ``_engine/distributed_bases/shipped_suites.py``). The ``nested`` OpInfos."""

from ..._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["njt_op_db"]

_load_shipped_module(globals(), "opinfo/definitions/nested.py")
