"""Kept ranks: rank processes kept for a whole class (``MultiProcContinuousTest``).

- ``leak_check``: what a test may leave behind in a kept rank, found and named;
- ``global_state``: the process-wide settings it reads before and after each test (torch's
  defaults and modes, ``torch.backends`` flags, the working directory, ``sys.path``);
- ``mesh_groups``: the groups of device meshes destroyed after a test once no mesh holds them;
- ``kept_rank``: what runs inside a kept rank: the class's process group, then one test
  method after another;
- ``kept_world``: the test process's side: start the ranks, give them each test, wait
  with the supervisor's rules, and start a fresh world after any test that did not pass;
- ``subgroup_cleanup``: the subgroups a test makes (device meshes) destroyed after it, for
  the DTensor and FSDP kept-rank bases;
- ``continuous_test_case``: ``MultiProcContinuousTest``, the test-facing class.
"""
