"""The private engine: everything behind the public modules, by concept. Nothing here is a
public promise; the public API is listed in ``docs/api.md``. ``_torch_private`` holds every
private torch or CPython access, each with a contract test.
"""
