"""The collective ledger and fault injection (ours, not an upstream path).

In every rank (fresh, kept, thread and launched ranks) each collective and point-to-point call
of the test is recorded: its number in its group, op, group, what the rank contributed, the
reduce op, root and async-ness, and the line of the user's code, invisibly to the code under
test (dispatch and function modes, ``torch.compile``, the profiler see what they see without
it). A failing or hung test's report shows where the ranks' calls first
differ; ranks that pass but made different calls fail the test (lockstep), unless the test or
its class opts out with :func:`not_in_lockstep`; :func:`current_calls` lists the calls a
rank's test has made so far. :func:`inject_fault` makes one rank's nth call
of an op raise, exit, die, hang or wait. ``TORCH_TESTING_EXT_COLLECTIVES=off`` records nothing.

- ``recording``: the wrappers around ``torch.distributed``'s collectives and the functions of
  functional collectives, and each rank's recorder;
- ``faults``: ``inject_fault``, ``not_in_lockstep``, and a fault armed for one test;
- ``rank_ledger``: a rank's ledger around one test, for every way of running ranks.

The fork server installs the wrappers before it imports test modules
(``ledger.collectives_preload``).

The ledger's data and the comparison of ranks are torch-free, in ``ledger.collective_ledger``
and ``ledger.ledger_report``.
"""

from ._engine.ledger.collective_ledger import Call
from ._engine.ledger.faults import InjectedFault, inject_fault, not_in_lockstep
from ._engine.ledger.recording import current_calls

__all__ = ["inject_fault", "not_in_lockstep", "InjectedFault", "current_calls", "Call"]
