"""Skip decorators, decided in the test process so that a skipped multi-process test starts
no rank (their mechanism is ``ranks.skip_checks``).

- ``platform_skips``: platform flags and the generic decorators of ``common_utils``;
- ``distributed_skips``: the decorators of ``common_distributed`` (GPU counts, backends...);
- ``inductor_skips``: ``requires_inductor_backend``, the device-generic Inductor guard.
"""
