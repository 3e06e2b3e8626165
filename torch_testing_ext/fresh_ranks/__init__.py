"""The machinery behind ``MultiProcessTestCase``: one test method on N rank processes.

- ``rank_protocol``: what a rank is told (``RankTask``, ``RankFacts``) and the hooks it calls;
- ``fork_server``: the preloaded fork server that ranks are forked from;
- ``rank_process``: what runs inside a rank, up to its ``RankOutcome``;
- ``rank_outcome``: the outcome protocol and how rank outcomes combine into a verdict;
- ``skip_exit_codes``: upstream's ``TEST_SKIPS`` exit codes;
- ``supervisor``: starting, waiting, fail-fast, timeouts with stacks, cleanup;
- ``leftovers``: processes the ranks left running: found after the test, named, killed;
- ``multiprocess_test_case``: ``MultiProcessTestCase``, the test-facing class.
"""
