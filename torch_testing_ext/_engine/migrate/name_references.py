"""The names a file imports or uses from this package's modules (or their upstream paths),
each with its line: what ``--check`` asks :mod:`availability` about.

Names are given at our path (``torch_testing_ext.common_utils.TestCase``) whether the file is
migrated yet or not. A reference found through an alias (``cu.TestCase`` after
``from torch.testing._internal import common_utils as cu``) names the alias's target; aliases
are taken file-wide, wherever the import stands (inside functions too).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .cst_nodes import Visitor, cst, dotted_name, require_libcst
from .upstream_paths import OURS, to_ours

__all__ = ["Reference", "references"]


class Reference(NamedTuple):
    """``name`` (full dotted, our path), imported or used at ``line``."""

    line: int
    name: str
    # The module ``name`` is looked up in, where the file's syntax says which; None where only
    # importing can tell (``torch_testing_ext.common_utils.TestCase`` used after ``import torch``).
    module: str | None
    # ``module`` is ``P.X`` bound by ``from P import X``: a module only if it imports as one.
    via_from_import: bool = False


class _Alias(NamedTuple):
    target: str
    from_import: bool


class _Collector(Visitor):
    def __init__(self, positions: Any) -> None:
        super().__init__()
        self._positions = positions
        self.imports: list[Reference] = []
        self.aliases: dict[str, _Alias] = {}
        self.imported_modules: set[str] = set()  # ``import M`` without ``as``: M usable dotted
        self.uses: list[tuple[int, str]] = []

    def _line(self, node: Any) -> int:
        return self._positions[node].start.line

    def visit_Import(self, node: Any) -> bool:
        for alias in node.names:
            module = to_ours(dotted_name(alias.name) or "")
            if module is None:
                continue
            if alias.asname is not None:
                self.aliases[alias.asname.name.value] = _Alias(module, from_import=False)
            else:
                self.imported_modules.add(module)
            if module != OURS:
                self.imports.append(Reference(self._line(alias), module, module.rpartition(".")[0]))
        return False

    def visit_ImportFrom(self, node: Any) -> bool:
        module = None if node.relative else to_ours(dotted_name(node.module) or "")
        if module is None:
            return False
        if isinstance(node.names, cst.ImportStar):
            self.imports.append(Reference(self._line(node), f"{module}.*", module))
            return False
        for alias in node.names:
            name = f"{module}.{alias.name.value}"
            local = alias.asname.name.value if alias.asname is not None else alias.name.value
            self.aliases[local] = _Alias(name, from_import=True)
            self.imports.append(Reference(self._line(alias), name, module))
        return False

    def visit_Attribute(self, node: Any) -> bool:
        dotted = dotted_name(node)
        if dotted is None:
            return True  # ``f().x`` or ``a[0].x``: chains may stand inside
        self.uses.append((self._line(node), dotted))
        return False

    def resolve(self, line: int, dotted: str) -> Reference | None:
        first, _, rest = dotted.partition(".")
        alias = self.aliases.get(first)
        if alias is not None:
            return Reference(line, f"{alias.target}.{rest}", alias.target, alias.from_import)
        name = to_ours(dotted)
        if name is None or name == OURS:
            return None
        known = [m for m in self.imported_modules if name.startswith(m + ".")]
        return Reference(line, name, max(known, key=len) if known else None)


def references(module: Any) -> list[Reference]:
    """Every name the parsed ``module`` (a ``libcst.Module``) imports or uses from our modules
    or their upstream paths, in the order found (imports first)."""
    require_libcst()
    wrapper = cst.metadata.MetadataWrapper(module)
    collector = _Collector(wrapper.resolve(cst.metadata.PositionProvider))
    wrapper.module.visit(collector)
    uses = (collector.resolve(line, dotted) for line, dotted in collector.uses)
    return collector.imports + [use for use in uses if use is not None]
