"""Self-tests of ``QuantizationTestCase``, ``NodeSpec`` and ``override_quantized_engine``
(``_engine/testcase/quantization_case.py``, faces ``common_quantization`` and
``common_quantized``): the sample data and the random state a test body starts from, the graph
checks passing and failing as upstream's do, the engine restored."""

import contextlib
import io
import operator
import unittest

import torch
from torch import nn

from torch_testing_ext import common_quantization, common_quantized
from torch_testing_ext.common_quantization import NodeSpec, QuantizationTestCase, override_quantized_engine
from torch_testing_ext.common_utils import TestCase

# What torch.rand(3) gives right after upstream's QuantizationTestCase.setUp (torch 2.13, seed
# 1234), read once from upstream's harness: a test body that draws numbers gets these there.
UPSTREAM_FIRST_DRAWS = [0.7602423429489136, 0.007685184478759766, 0.3358026146888733]


class _Probe(QuantizationTestCase):
    def test_nothing(self):
        pass


def _probe():
    case = _Probe("test_nothing")
    case.setUp()
    return case


class _LinearRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x):
        return torch.relu(self.linear(x)).sum() + x.sum()


class TestQuantizationTestCase(TestCase):
    def test_faces_offer_the_same_objects(self):
        # As upstream's common_quantization takes it from common_quantized (torch's own file here).
        self.assertIs(common_quantization.override_quantized_engine, common_quantized.override_quantized_engine)

    def test_sample_data(self):
        case = _probe()
        shapes = {
            "calib_data": [(2, 5)],
            "train_data": [(2, 5), (2,)],
            "img_data_1d": [(2, 3, 10)],
            "img_data_2d": [(1, 3, 10, 10)],
            "img_data_3d": [(1, 3, 5, 5, 5)],
            "img_data_1d_train": [(2, 3, 10), (1,)],
            "img_data_2d_train": [(1, 3, 10, 10), (1,)],
            "img_data_3d_train": [(1, 3, 5, 5, 5), (1,)],
        }
        for name, expected in shapes.items():
            with self.subTest(name):
                batches = getattr(case, name)
                self.assertEqual(len(batches), 2)
                self.assertEqual([[tuple(t.shape) for t in batch] for batch in batches], [expected] * 2)
        self.assertEqual(case.train_data[0][1].dtype, torch.long)
        self.assertIs(case.img_data_dict[2], case.img_data_2d)
        self.assertEqual([t.name for t in case.all_quant_types], ["DYNAMIC", "STATIC", "QAT"])
        self.assertEqual([t.name for t in case.static_quant_types], ["STATIC", "QAT"])

    def test_random_state_after_set_up_is_upstreams(self):
        _probe()
        self.assertEqual(torch.rand(3).tolist(), UPSTREAM_FIRST_DRAWS, atol=0, rtol=0)


class TestNodeSpec(TestCase):
    def test_equality_and_hash(self):
        self.assertEqual(NodeSpec.call_function(torch.relu), NodeSpec("call_function", torch.relu))
        self.assertNotEqual(NodeSpec.call_function(torch.relu), NodeSpec.call_method(torch.relu))
        self.assertEqual(len({NodeSpec.call_module(nn.Linear), NodeSpec.call_module(nn.Linear)}), 1)
        self.assertEqual(NodeSpec.call_method("sum").op, "call_method")
        self.assertFalse(NodeSpec.call_method("sum") == "sum")
        self.assertEqual(repr(NodeSpec.call_method("sum")), "'call_method' 'sum'")


class TestCheckGraphModuleNodes(TestCase):
    def setUp(self):
        super().setUp()
        self.graph = torch.fx.symbolic_trace(_LinearRelu())
        self.case = _probe()
        self.linear = NodeSpec.call_module(nn.Linear)
        self.relu = NodeSpec.call_function(torch.relu)
        self.sum = NodeSpec.call_method("sum")
        self.add = NodeSpec.call_function(operator.add)

    def test_present_counted_and_ordered_nodes_pass(self):
        self.case.checkGraphModuleNodes(
            self.graph, expected_node=self.relu,
            expected_node_occurrence={self.linear: 1, self.sum: 2, NodeSpec.call_function(torch.sigmoid): 0},
            expected_node_list=[self.linear, self.relu, self.add])

    def test_each_check_fails_with_upstreams_message(self):
        rows = [
            ({"expected_node": NodeSpec.call_function(torch.sigmoid)}, "not found in the graph module"),
            ({"expected_node_occurrence": {self.sum: 1}}, "Expected occurrence:1 Found occurrence:2"),
            ({"expected_node_occurrence": {self.relu: 0}}, "expected no occurrence but found"),
            ({"expected_node_occurrence": {NodeSpec.call_function(torch.sigmoid): 1}}, "not found"),
            ({"expected_node_list": [self.relu, self.linear]}, "Expected ordered list:"),
        ]
        for kwargs, message in rows:
            with self.subTest(kwargs=kwargs), self.assertRaisesRegex(AssertionError, message):
                self.case.checkGraphModuleNodes(self.graph, **kwargs)

    def test_print_graph_module(self):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            text = self.case.printGraphModule(self.graph)
        self.assertEqual(printed.getvalue(), text + "\n")
        self.assertIn("'call_module' 'linear' 'linear'", text)
        self.assertIn("module type: <class 'torch.nn.modules.linear.Linear'>", text)
        with contextlib.redirect_stdout(io.StringIO()) as quiet:
            self.case.printGraphModule(self.graph, print_str=False)
        self.assertEqual(quiet.getvalue(), "")


class TestOverrideQuantizedEngine(TestCase):
    def test_switches_and_restores(self):
        engines = [e for e in torch.backends.quantized.supported_engines if e != "none"]
        if len(engines) < 2:
            raise unittest.SkipTest(f"this torch build has fewer than two quantized engines: {engines}")
        before = torch.backends.quantized.engine
        other = next(e for e in engines if e != before)
        with override_quantized_engine(other):
            self.assertEqual(torch.backends.quantized.engine, other)
        self.assertEqual(torch.backends.quantized.engine, before)
        with self.assertRaises(KeyError), override_quantized_engine(other):
            raise KeyError("the block failed")
        self.assertEqual(torch.backends.quantized.engine, before)
