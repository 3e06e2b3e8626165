"""The migration tool: ``python -m torch_testing_ext.migrate PATH...`` moves upstream-style tests
onto this package by rewriting their imports and dotted uses, and lists what we do not provide.

- ``upstream_paths``: the rewrite rule as data (``torch.testing._internal`` ->
  ``torch_testing_ext``, ``torch._dynamo.test_case`` -> ``torch_testing_ext.dynamo_test_case``);
- ``cst_nodes``: LibCST, imported only if installed, and the dotted name of a node;
- ``import_rewrite``: the LibCST transformer that rewrites imports and dotted uses;
- ``name_references``: the names a file imports or uses from those modules, with their lines;
- ``availability``: which of those names this package provides (by importing it);
- ``source_files``: input paths checked, walked, read and parsed; files written atomically;
- ``migrate_cli``: the command line (``--check``, ``--diff``; one-line errors, exit 2);
- ``__main__``: the ``python -m`` entry point.

LibCST is an optional dependency (``pip install "torch_testing_ext[migrate]"``): every module
here imports without it, and the command line says in one line when it is missing.
"""
