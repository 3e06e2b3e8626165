"""Named as in ``torch.testing._internal.common_methods_invocations``: the installed torch's own
module, loaded with its harness imports bound to this package (none of its code is in this
package; see ``_engine/distributed_bases/shipped_suites.py``). The operator database: ``op_db``
(every ``OpInfo``), the sample-input functions, and the OpInfo classes it imports."""

from ._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["op_db", "python_ref_db", "ops_and_refs", "OpInfo", "SampleInput", "ErrorInput", "DecorateInfo"]

_load_shipped_module(globals(), "common_methods_invocations.py")
