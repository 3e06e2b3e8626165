"""The migration tool: ``python -m torch_testing_ext.migrate PATH...`` moves upstream-style tests
onto this package by rewriting their imports and dotted uses, and lists what we do not provide
(the engine's ``migrate``).

- ``__main__``: the ``python -m`` entry point.

LibCST is an optional dependency (``pip install "torch_testing_ext[migrate]"``): the tool
imports without it, and the command line says in one line when it is missing.
"""
