"""The pytest plugin, registered by the ``pytest11`` entry point ``torch_testing_ext``.

Installing the package activates it in every pytest run of that environment (no ``-p``);
``-p no:torch_testing_ext`` turns it off. It imports no torch, so pytest runs that never touch
the harness pay nothing for it.

- ``plugin``: the hooks pytest calls: settings checked before any test, a per-rank
  ``--junitxml`` path under a launcher, rank failures reported from the user's frame, and the
  ``world_size`` marker's tests (their machinery is the engine's ``pytest_native``).
"""
