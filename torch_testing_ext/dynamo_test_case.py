"""Dynamo test cases, at the path of ``torch._dynamo.test_case`` (the plain import rewrite
``torch._dynamo.test_case`` -> ``torch_testing_ext.dynamo_test_case`` moves a file here).

``TestCase`` resets Dynamo and its counters around every test and sets upstream's class-wide
Dynamo config; ``run_tests(needs=...)`` runs the file unless a need (``"cuda"`` or a module
name) is missing. The definitions live in ``_engine/dynamo_bases/dynamo_case.py``.
"""

from __future__ import annotations

from ._engine.dynamo_bases.dynamo_case import DynamoTestCase, reset_dynamo
from ._engine.dynamo_bases.dynamo_case import run_tests_if_available as run_tests

__all__ = ["TestCase", "run_tests", "DynamoTestCase", "reset_dynamo"]

# The upstream name.
TestCase = DynamoTestCase
