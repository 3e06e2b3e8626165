"""Named as in ``torch.testing._internal.distributed.distributed_test``: the installed torch's
own suite, loaded on this harness (none of its code is in this package; see
``_engine/distributed_bases/shipped_suites.py``). Like upstream's, it reads ``BACKEND`` and
``WORLD_SIZE`` from the environment as it is imported; its classes read ``TEMP_DIR`` and
``INIT_METHOD`` too. ``__all__`` names what a test file takes from it; every other name in it is
the installed torch's."""

from .._engine.distributed_bases.shipped_suites import load_shipped_suite

__all__ = ["DistributedTest", "TestDistBackend"]

load_shipped_suite(globals(), "distributed/distributed_test.py", needs=("BACKEND", "WORLD_SIZE"))
