"""Named as in ``torch.testing._internal.opinfo.definitions.sparse``: the installed torch's own
module, loaded with its harness imports bound to this package (none of its code is in this
package; see ``_engine/distributed_bases/shipped_suites.py``). The ``sparse`` OpInfos."""

from ..._engine.distributed_bases.shipped_suites import load_shipped_module as _load_shipped_module

__all__ = ["sample_inputs_sparse_reduction", "sample_inputs_sparse_mul", "sample_inputs_sparse_like_fns"]

_load_shipped_module(globals(), "opinfo/definitions/sparse.py")
