"""Upstream's per-test timeouts for its distributed suites, named as in ``common_distributed``
(tests that start their own processes read them; this harness's ranks use the class's
``timeout``).

Example::

    get_timeout(self.id())   # 300, or the override for the test's method name
"""

from __future__ import annotations

import os

from ..skips.platform_skips import TEST_WITH_ROCM, TEST_WITH_TSAN

__all__ = ["TIMEOUT_DEFAULT", "TIMEOUT_OVERRIDE", "get_timeout"]

# Seconds: longer under ThreadSanitizer, else DISTRIBUTED_TESTS_DEFAULT_TIMEOUT (default 300).
TIMEOUT_DEFAULT: int = 500 if TEST_WITH_TSAN else int(os.environ.get("DISTRIBUTED_TESTS_DEFAULT_TIMEOUT", "300"))
# The tests upstream gives more (or, on ROCm, less) time, by method name.
TIMEOUT_OVERRIDE: dict[str, int] = {
    "test_ddp_uneven_inputs": 400,
    "test_DistributedDataParallel": 500,
    **({"test_join_kwargs": 200} if TEST_WITH_ROCM else {}),
}


def get_timeout(test_id: str) -> int:
    """The timeout in seconds for the test ``test_id`` (``module.Class.test_x``): its method
    name's override, else :data:`TIMEOUT_DEFAULT`."""
    return TIMEOUT_OVERRIDE.get(test_id.split(".")[-1], TIMEOUT_DEFAULT)
