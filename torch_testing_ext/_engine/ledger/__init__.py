"""The collective ledger: each rank's collective calls recorded (``recording``), compared across
ranks (``ledger_report``), and faults injected at the same point (``faults``).

- ``collective_ledger``: ``Call`` and ``Ledger``: a rank's collective calls, and its ledger's files;
- ``collectives_preload``: the server wraps the collectives before it imports test modules;
- ``faults``: ``inject_fault``, ``not_in_lockstep``, and a fault armed for one test;
- ``ledger_report``: where the ranks' collective calls first differ, in a few lines;
- ``rank_ledger``: a rank's ledger around one test, for every way of running ranks;
- ``recording``: the wrappers around ``torch.distributed``'s collectives and the functions of
  functional collectives, and each rank's recorder.
"""
