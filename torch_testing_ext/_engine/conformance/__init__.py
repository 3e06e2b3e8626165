"""The conformance kit for c10d backends.

- ``contract``: the items, what an item runs with (``Context``), how a wrong result reads;
- ``items``: the contract's items, a module per area.
"""
