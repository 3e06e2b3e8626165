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

The machinery is the engine's ``ledger`` folder (recording, comparison, report, faults).
"""

from ._engine.ledger.collective_ledger import Call
from ._engine.ledger.faults import InjectedFault, inject_fault, not_in_lockstep
from ._engine.ledger.recording import current_calls

__all__ = ["inject_fault", "not_in_lockstep", "InjectedFault", "current_calls", "Call"]
