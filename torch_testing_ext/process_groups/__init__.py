"""Process groups in tests: creating them without fixed ports, and tearing them down safely.

- ``rendezvous``: ``init_method``s that never use a fixed port; a real world-size-1 group;
- ``teardown``: the one place that destroys process groups (and keeps them alive in a rank
  until it is safe to drop them).
"""
