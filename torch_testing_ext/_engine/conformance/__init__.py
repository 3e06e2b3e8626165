"""The conformance kit for c10d backends: contract suites, claims, one world per item, a score.

- ``vocabulary``: the kit's version, its areas, reduce ops and dtypes (torch-free);
- ``contract``: the items, what an item runs with (``Context``), how a wrong result reads;
- ``items``: the contract's items, a module per area;
- ``claims``: what a backend claims (a manifest), and why an item is not claimed (torch-free);
- ``kit_ids``: a kit test's id, and the world size and item it names (torch-free);
- ``kit_settings``: what one run is asked to do, from pytest's options or the environment;
- ``kit_session``: the kit in a pytest session: options, the breaker, the scorecard (torch-free);
- ``pytest_kit``: one test per item and world size, and the backend's group in a rank;
- ``scorecard``: the scored report, Markdown and JSON (torch-free);
- ``kit_cli``: ``python -m torch_testing_ext.conformance``.
"""
