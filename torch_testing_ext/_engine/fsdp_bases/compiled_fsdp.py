"""``compiled_fsdp_test``: run a ``fully_shard`` test eagerly, then with its modules' compute
compiled by Inductor (where a GPU Inductor backend exists).

Example::

    @compiled_fsdp_test(compile_compute_on_module=TransformerBlock)
    def test_train_parity(self):
        ...  # calls fully_shard(...) from this module's globals
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from ... import devices
from .._torch_private import inductor_config
from .collective_patches import swapped_on_every_rank

__all__ = ["compiled_fsdp_test", "COMPILED_COMPUTE_SKIP_WARNING"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])
COMPILED_COMPUTE_SKIP_WARNING = "Inductor on GPU needs Triton and recent GPU arch"


def _fully_shard_compiling(compile_compute_on_module: type | None) -> Callable[..., Any]:
    from torch.distributed.fsdp import fully_shard

    def fully_shard_with_compiled_compute(module: Any, *args: Any, **kwargs: Any) -> Any:
        sharded = fully_shard(module, *args, **kwargs)
        if compile_compute_on_module is None or isinstance(module, compile_compute_on_module):
            module.compile()
        return sharded

    return fully_shard_with_compiled_compute


def compiled_fsdp_test(compile_compute_on_module: type | None = None) -> Callable[[_F], _F]:
    """Decorator: run the test twice, first as written, then with the ``fully_shard`` name in
    its module's globals replaced by one that also calls ``.compile()`` on each module it
    shards (only on instances of ``compile_compute_on_module``, if given).

    The compiled run needs Inductor's GPU backend (triton and an accelerator); without it
    the test runs eagerly only, with a warning, as upstream. The global is restored after
    each run, also after a failure.
    """

    def decorate(func: _F) -> _F:
        @functools.wraps(func)
        def eager_then_compiled(*args: Any, **kwargs: Any) -> Any:
            from torch.distributed.fsdp import fully_shard

            func(*args, **kwargs)
            if not devices.has_gpu_inductor():
                warnings.warn(COMPILED_COMPUTE_SKIP_WARNING, stacklevel=2)
                return
            namespace = func.__globals__
            namespace.setdefault("fully_shard", fully_shard)
            # Each swap reads its value before any rank changes it (rank threads share them).
            compiling = _fully_shard_compiling(compile_compute_on_module)
            with swapped_on_every_rank(inductor_config(), "compile_threads", 1), \
                    swapped_on_every_rank(namespace, "fully_shard", compiling):
                func(*args, **kwargs)

        return eager_then_compiled  # type: ignore[return-value]  # functools.wraps keeps func's signature

    return decorate
