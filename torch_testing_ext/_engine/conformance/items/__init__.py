"""The contract's items, a module per area; importing this package registers them all.

- ``collective_items``: all_reduce by reduce op and dtype, gathers, reduce-scatters, all-to-alls, rooted ops, barrier
"""

from . import collective_items  # noqa: F401
