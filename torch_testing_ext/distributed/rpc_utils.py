"""Named as in ``torch.testing._internal.distributed.rpc_utils``: the installed torch's own file,
loaded on this harness (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). Its lists of RPC suites (``GENERIC_TESTS``...)
hold the installed torch's suites on our harness, and ``generate_tests`` mixes each with an
agent's fixture and ``SpawnHelper`` (our ``MultiProcessTestCase``). ``__all__`` names what a test
file takes from it; every other name in it is the installed torch's."""

from .._engine.distributed_bases.shipped_suites import load_shipped_suite

__all__ = ["GENERIC_TESTS", "GENERIC_CUDA_TESTS", "TENSORPIPE_TESTS", "TENSORPIPE_CUDA_TESTS",
           "FAULTY_AGENT_TESTS", "SpawnHelper", "generate_tests"]

load_shipped_suite(globals(), "distributed/rpc_utils.py")
