"""The import rewrite: files (``python -m torch_testing_ext.migrate``, LibCST) and source text.

The command line needs LibCST; the suites torch ships are rewritten at import time with the
standard library alone (``source_rewrite``).

- ``availability``: which of those names this package provides (by importing it);
- ``cst_nodes``: LibCST, imported only if installed, and the dotted name of a node;
- ``import_rewrite``: the LibCST transformer that rewrites imports and dotted uses;
- ``migrate_cli``: the command line (``--check``, ``--diff``; one-line errors, exit 2);
- ``name_references``: the names a file imports or uses from those modules, with their lines;
- ``source_rewrite``: the rule on source text with the standard library, every line kept
  where it was (for ``distributed_bases.shipped_suites``);
- ``source_files``: input paths checked, walked, read and parsed; files written atomically;
- ``upstream_paths``: the rewrite rule as data (``torch.testing._internal`` ->
  ``torch_testing_ext``, ``torch._dynamo.test_case`` -> ``torch_testing_ext.dynamo_test_case``).
"""
