"""One test in one process: ``TestCase`` (tensor-aware asserts, expecttest, seeding), the
comparison behind ``assertEqual``, and ``parametrize``.

- ``test_case``: ``TestCase`` and the seed every test starts from;
- ``comparison``: ``assert_equal``, tensor-aware equality with the path of a mismatch;
- ``parametrize``: ``@parametrize`` and ``instantiate_parametrized_tests``.
"""
