"""Processes as ``/proc`` shows them: who started whom, and nothing left behind.

- ``linux_prctl``: child subreaper and parent-death signal, where Linux offers them;
- ``marked_run``: a command run with a marker in its environment, and every process seen
  carrying it (what a run left behind);
- ``proc_table``: the process table, descendants of a process, a process's command line and
  environment.
"""
