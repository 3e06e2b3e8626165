"""Named as in ``torch.testing._internal.opinfo``: the installed torch's own module, loaded with
its harness imports bound to this package (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). The OpInfo package: ``core``, ``refs``,
``utils`` and ``definitions``."""

from .._engine.distributed_bases.shipped_suites import load_shipped_module

load_shipped_module(globals(), "opinfo/__init__.py")
