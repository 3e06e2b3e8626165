"""Which public names of torch's own harness modules our faces lack.

For each upstream harness module (``common_distributed``, ``common_fsdp``, ``common_dtensor``,
...), read the installed torch's file, or the one in ``--internal DIR`` (a copy of another
release's ``torch/testing/_internal``), without importing it; list the public names it defines
at module level (functions, classes, assignments, also under a top-level ``if``/``try``), and
print those our face of the same path does not have::

    python benchmarks/harness_names.py
    python benchmarks/harness_names.py --internal /tmp/v215/lib/python3.11/site-packages/torch/testing/_internal

A name upstream deletes at import (``del acc``) is not counted. Figures only: the exit status
is 0 (2 on bad arguments).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import sys
from pathlib import Path

# upstream path under torch/testing/_internal -> our face
MODULES = {
    "common_distributed.py": "torch_testing_ext.common_distributed",
    "common_fsdp.py": "torch_testing_ext.common_fsdp",
    "distributed/_tensor/common_dtensor.py": "torch_testing_ext.distributed._tensor.common_dtensor",
    "distributed/fake_pg.py": "torch_testing_ext.distributed.fake_pg",
    "distributed/multi_threaded_pg.py": "torch_testing_ext.distributed.multi_threaded_pg",
    "common_utils.py": "torch_testing_ext.common_utils",
    "common_device_type.py": "torch_testing_ext.common_device_type",
    "common_cuda.py": "torch_testing_ext.common_cuda",
}


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` with the bodies of its top-level ``if``/``try`` statements, recursively."""
    found = []
    for node in body:
        found.append(node)
        if isinstance(node, ast.If):
            found += _statements(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            found += _statements(node.body + node.orelse + node.finalbody
                                 + [s for handler in node.handlers for s in handler.body])
    return found


def defined_names(source: str) -> set[str]:
    """The public names ``source`` defines at module level (less those it deletes there)."""
    names: set[str] = set()
    deleted: set[str] = set()
    for node in _statements(ast.parse(source).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Delete):
            deleted.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {name for name in names - deleted if not name.startswith("_")}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--internal", type=Path, metavar="DIR",
                        help="a torch/testing/_internal directory (default: the installed torch's)")
    args = parser.parse_args(argv)
    if args.internal is None:
        import torch

        args.internal = Path(torch.__file__).parent / "testing" / "_internal"
    if not (args.internal / "common_utils.py").is_file():
        parser.error(f"--internal: not a torch/testing/_internal directory: {args.internal}")
    print(f"upstream harness: {args.internal}")
    print("| upstream module | public names | ours lacks | names |")
    print("|---|---|---|---|")
    total = 0
    for upstream, ours in MODULES.items():
        path = args.internal / upstream
        if not path.is_file():
            print(f"| {upstream} | - | - | not in this torch |")
            continue
        names = defined_names(path.read_text(encoding="utf-8"))
        face = importlib.import_module(ours)
        missing = sorted(name for name in names if not hasattr(face, name))
        total += len(missing)
        print(f"| {upstream} | {len(names)} | {len(missing)} | {' '.join(missing)} |")
    print(f"\nmissing in all: {total}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    sys.exit(main(sys.argv[1:]))
