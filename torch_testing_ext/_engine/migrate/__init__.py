"""The import rewrite behind ``python -m torch_testing_ext.migrate`` (needs LibCST).

- ``availability``: which of those names this package provides (by importing it);
- ``cst_nodes``: LibCST, imported only if installed, and the dotted name of a node;
- ``import_rewrite``: the LibCST transformer that rewrites imports and dotted uses;
- ``migrate_cli``: the command line (``--check``, ``--diff``; one-line errors, exit 2);
- ``name_references``: the names a file imports or uses from those modules, with their lines;
- ``source_files``: input paths checked, walked, read and parsed; files written atomically;
- ``upstream_paths``: the rewrite rule as data (``torch.testing._internal`` ->
  ``torch_testing_ext``, ``torch._dynamo.test_case`` -> ``torch_testing_ext.dynamo_test_case``).
"""
