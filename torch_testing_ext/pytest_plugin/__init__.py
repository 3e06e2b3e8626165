"""The pytest plugin, registered by the ``pytest11`` entry point ``torch_testing_ext``.

Installing the package activates it in every pytest run of that environment (no ``-p``);
``-p no:torch_testing_ext`` turns it off. It imports no torch, so pytest runs that never touch
the harness pay nothing for it.

- ``plugin``: the hooks pytest calls: settings checked before any test, a per-rank
  ``--junitxml`` path under a launcher, and rank failures reported from the user's frame;
- ``rank_failure_report``: how a test whose ranks did not all pass reads in pytest's report.
"""
