"""``run_tests()``: a test file's ``__main__``, its result and its JUnit XML.

- ``arg_types``: argument types shared with the shard driver (torch-free);
- ``main``: ``run_tests()``, the ``__main__`` entry of every test file (and ``load_tests``);
- ``recording_result``: the unittest result that records each test and writes JUnit XML.
"""
