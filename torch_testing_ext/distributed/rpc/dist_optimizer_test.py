"""Named as in ``torch.testing._internal.distributed.rpc.dist_optimizer_test``: the installed torch's own
suite, loaded on this harness (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). ``__all__`` names the test classes a test file
takes from it; every other name in it is the installed torch's."""

from ..._engine.distributed_bases.shipped_suites import load_shipped_suite

__all__ = ["DistOptimizerTest"]

load_shipped_suite(globals(), "distributed/rpc/dist_optimizer_test.py")
