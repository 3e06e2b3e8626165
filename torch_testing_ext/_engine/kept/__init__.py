"""Kept ranks: a class's tests share rank processes and a process group
(``MultiProcContinuousTest``), with what a test leaves behind checked after it.

- ``continuous_test_case``: ``MultiProcContinuousTest``, the test-facing class;
- ``global_state``: the process-wide settings it reads before and after each test (torch's
  defaults and modes, ``torch.backends`` flags, the working directory, ``sys.path``);
- ``kept_rank``: what runs inside a kept rank: the class's process group, then one test
  method after another;
- ``kept_world``: the test process's side: start the ranks, give them each test, wait
  with the supervisor's rules, and start a fresh world after any test that did not pass;
- ``leak_check``: what a test may leave behind in a kept rank, found and named;
- ``mesh_groups``: the groups of device meshes destroyed after a test once no mesh holds them;
- ``subgroup_cleanup``: the subgroups a test makes (device meshes) destroyed after it, for
  the DTensor and FSDP kept-rank bases;
- ``torchcomms_test_case``: ``C10dTorchCommsTestBase``, kept ranks on torchcomms communicators.
"""
