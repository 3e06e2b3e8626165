"""``QuantizationTestCase`` and what quantization tests check graphs with.

``NodeSpec`` names one kind of FX node (``call_function`` of a function, ``call_method`` of a
method name, ``call_module`` of a module type); ``QuantizationTestCase.checkGraphModuleNodes``
counts and orders a graph module's nodes by it. ``setUp`` draws upstream's sample batches, in
upstream's order, so the random state a test body starts from is the one it has upstream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch.ao.quantization.quant_type import QuantType

from .tensor_testcase import TestCase

__all__ = ["NodeSpec", "QuantizationTestCase"]


class NodeSpec:
    """One kind of FX node: its ``op`` and ``target`` (for ``call_module``, the module's type)."""

    def __init__(self, op: str, target: Any) -> None:
        self.op = op
        self.target = target

    @classmethod
    def call_function(cls, target: Any) -> NodeSpec:
        """Nodes that call the function ``target``."""
        return cls("call_function", target)

    @classmethod
    def call_method(cls, target: str) -> NodeSpec:
        """Nodes that call the tensor method named ``target``."""
        return cls("call_method", target)

    @classmethod
    def call_module(cls, target: type) -> NodeSpec:
        """Nodes that call a submodule of type ``target``."""
        return cls("call_module", target)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeSpec):
            return NotImplemented
        return (self.op, self.target) == (other.op, other.target)

    def __hash__(self) -> int:
        return hash((self.op, self.target))

    def __repr__(self) -> str:
        return f"{self.op!r} {self.target!r}"


def _node_specs(graph_module: torch.fx.GraphModule) -> list[NodeSpec]:
    """The graph's call nodes in order, each as a :class:`NodeSpec`."""
    modules = dict(graph_module.named_modules(remove_duplicate=False))
    specs = []
    for node in graph_module.graph.nodes:
        if node.op in ("call_function", "call_method"):
            specs.append(NodeSpec(node.op, node.target))
        elif node.op == "call_module":
            specs.append(NodeSpec(node.op, type(modules[node.target])))
    return specs


def _draws(count: int, *shape: int) -> list[list[torch.Tensor]]:
    return [[torch.rand(*shape, dtype=torch.float)] for _ in range(count)]


def _labelled_draws(count: int, label_count: int, *shape: int) -> list[list[torch.Tensor]]:
    return [[torch.rand(*shape, dtype=torch.float), torch.randint(0, 1, (label_count,), dtype=torch.long)]
            for _ in range(count)]


class QuantizationTestCase(TestCase):
    """``TestCase`` with quantization's sample data and graph checks.

    ``setUp`` gives each test ``calib_data``, ``train_data``, ``img_data_1d/2d/3d`` (and their
    ``_train`` forms with labels), ``img_data_dict`` (by dimension), ``static_quant_types`` and
    ``all_quant_types``.
    """

    def setUp(self) -> None:
        super().setUp()
        # The same draws, in the same order, as upstream's setUp: the random state a test
        # body starts from depends on them.
        self.calib_data = _draws(2, 2, 5)
        self.train_data = _labelled_draws(2, 2, 2, 5)
        self.img_data_1d = _draws(2, 2, 3, 10)
        self.img_data_2d = _draws(2, 1, 3, 10, 10)
        self.img_data_3d = _draws(2, 1, 3, 5, 5, 5)
        self.img_data_1d_train = _labelled_draws(2, 1, 2, 3, 10)
        self.img_data_2d_train = _labelled_draws(2, 1, 1, 3, 10, 10)
        self.img_data_3d_train = _labelled_draws(2, 1, 1, 3, 5, 5, 5)
        self.img_data_dict = {1: self.img_data_1d, 2: self.img_data_2d, 3: self.img_data_3d}
        self.static_quant_types = [QuantType.STATIC, QuantType.QAT]
        self.all_quant_types = [QuantType.DYNAMIC, QuantType.STATIC, QuantType.QAT]

    def checkGraphModuleNodes(
        self,
        graph_module: torch.fx.GraphModule,
        expected_node: NodeSpec | None = None,
        expected_node_occurrence: Mapping[NodeSpec, int] | None = None,
        expected_node_list: Sequence[NodeSpec] | None = None,
    ) -> None:
        """Assert that ``graph_module`` has a node ``expected_node``; has each node of
        ``expected_node_occurrence`` exactly that many times (0: none); and has the nodes of
        ``expected_node_list`` in that order (others may come between them)."""
        found = _node_specs(graph_module)
        counts: dict[NodeSpec, int] = {}
        for spec in found:
            counts[spec] = counts.get(spec, 0) + 1
        if expected_node is not None:
            self.assertTrue(expected_node in counts, f"node:{expected_node} not found in the graph module")
        for spec, occurrence in (expected_node_occurrence or {}).items():
            if occurrence == 0:
                self.assertTrue(spec not in counts, f"Check failed for node:{spec} expected no occurrence but found")
                continue
            self.assertTrue(spec in counts, f"Check failed for node:{spec} not found")
            self.assertTrue(counts[spec] == occurrence, f"Check failed for node:{spec} Expected occurrence:"
                            f"{occurrence} Found occurrence:{counts[spec]}")
        if expected_node_list is not None:
            wanted = list(expected_node_list)
            matched = 0
            for spec in found:
                if matched < len(wanted) and spec == wanted[matched]:
                    matched += 1
            self.assertTrue(matched == len(wanted), "Check failed for graph:"
                            + self.printGraphModule(graph_module, print_str=False)
                            + f"Expected ordered list:{wanted}")

    def printGraphModule(self, graph_module: torch.fx.GraphModule, print_str: bool = True) -> str:
        """One line per node of ``graph_module`` (op, name, target, args, kwargs, and a called
        module's type); printed too unless ``print_str`` is false."""
        modules = dict(graph_module.named_modules(remove_duplicate=False))
        lines = []
        for node in graph_module.graph.nodes:
            line = " ".join(repr(part) for part in (node.op, node.name, node.target, node.args, node.kwargs))
            if node.op == "call_module":
                line += f" module type: {type(modules[node.target])!r}"
            lines.append(line)
        text = "\n".join(lines)
        if print_str:
            print(text)
        return text
