"""Finding, naming and stopping processes (Linux ``/proc`` and ``prctl``); torch-free.

- ``proc_table``: the process table, descendants of a process, a process's command line and
  environment;
- ``linux_prctl``: child subreaper and parent-death signal, where Linux offers them;
- ``marked_run``: a command run with a marker in its environment, and every process seen
  carrying it (what a run left behind).
"""
