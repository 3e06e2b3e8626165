"""torch_testing_ext: a public, version-stable harness for PyTorch distributed tests.

What tests import lives at the top level. The upstream-named faces mirror
``torch.testing._internal`` (``common_utils``, ``common_distributed``, ``common_device_type``,
``common_fsdp``, ``common_cuda``, ``inductor_utils``, ``triton_utils``, ``dynamo_test_case``,
``logging_utils``, ``two_tensor``, ``dist_utils``, ``common_dist_composable`` and the package
``distributed``) so that an upstream test moves here by rewriting its imports. Ours:
``collectives`` (the collective ledger and fault injection), ``devices`` (machine facts),
``hf_bert`` (the BERT size for this machine), ``fake_ddp``, ``cpu_compat``, ``dtensor``,
``run_test`` (the shard driver), ``migrate`` (the import rewrite), ``many_worlds`` (one test
across world sizes), ``pytest_plugin`` and ``launcher.pytest_ranks``; and here, the errors that
end a multi-rank test whose ranks did not all pass, or whose worlds disagree. ``docs/api.md``
lists the public API; the private engine behind it (``_engine``) promises nothing.
"""

from ._engine.worlds.outcomes import RankError, RankFailure, RanksDidNotPass, WorldsDisagree

__version__ = "0.1.0"

__all__ = ["RanksDidNotPass", "RankFailure", "RankError", "WorldsDisagree", "__version__"]
