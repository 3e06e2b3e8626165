"""Self-tests of ``common_pruning`` (``_engine/models/pruning_models.py``): the models' layers
(what pruning tests fuse), their outputs' shapes, the sparsifier's fixed mask update,
``MockSparseLinear.from_dense`` and ``rows_are_subset``."""

import torch
from torch import nn

from torch_testing_ext import common_pruning as P
from torch_testing_ext.common_utils import TestCase

IMAGE = (1, 1, 28, 28)
# name: (input shape, output shape, the types of seq's layers, the attributes after seq)
MODELS = {
    "SimpleLinear": ((3, 7), (3, 10), "LLL", ["linear1", "linear2"]),
    "LinearBias": ((3, 7), (3, 10), "LLLLL", []),
    "LinearActivation": ((3, 7), (3, 10), "LRLTL", ["linear1", "act1", "linear2", "act2"]),
    "LinearActivationFunctional": ((3, 7), (3, 10), "LRLRL", ["linear1", "linear2", "linear3", "act1"]),
    "SimpleConv2d": (IMAGE, (1, 52, 20, 20), "CC", ["conv2d1", "conv2d2"]),
    "Conv2dBias": (IMAGE, (1, 52, 18, 18), "CCC", ["conv2d1", "conv2d2"]),
    "Conv2dActivation": (IMAGE, (1, 52, 18, 18), "CRCTCR", ["conv2d1", "conv2d2"]),
    "Conv2dPadBias": (IMAGE, (1, 52, 24, 24), "CRCRCRCRCT", ["conv2d1", "act1", "conv2d2", "act2"]),
    "Conv2dPool": (IMAGE, (1, 52, 3, 3), "CMRCTA", ["conv2d1", "maxpool", "af1", "conv2d2", "conv2d3"]),
    "Conv2dPoolFlattenFunctional": (IMAGE, (1, 13), "CMRCTA", ["conv2d1", "af1", "conv2d2", "avg_pool", "fc"]),
    "Conv2dPoolFlatten": (IMAGE, (1, 13), "CMRCTA", ["conv2d1", "af1", "conv2d2", "avg_pool", "flatten", "fc"]),
}
LETTERS = {nn.Linear: "L", nn.ReLU: "R", nn.Tanh: "T", nn.Conv2d: "C", nn.MaxPool2d: "M", nn.AvgPool2d: "A"}


class TestPruningModels(TestCase):
    def test_layers_and_outputs(self):
        for name, (given, produced, seq, after) in MODELS.items():
            with self.subTest(name):
                model = getattr(P, name)()
                self.assertEqual("".join(LETTERS[type(layer)] for layer in model.seq), seq)
                self.assertEqual([child for child, _ in model.named_children()], ["seq", *after])
                self.assertEqual(tuple(model(torch.randn(*given)).shape), produced)

    def test_bias_where_upstreams_has_it(self):
        self.assertEqual([layer.bias is not None for layer in P.LinearBias().seq], [True, False, True, True, False])
        self.assertEqual([m.bias is not None for m in P.SimpleLinear().modules() if isinstance(m, nn.Linear)],
                         [False] * 5)
        pads = [layer.padding for layer in P.Conv2dPadBias().seq if isinstance(layer, nn.Conv2d)]
        self.assertEqual(pads, [(1, 1), (0, 0), (1, 1), (1, 1), (0, 0)])

    def test_lstm_models(self):
        x = torch.randn(3, 2, 8)
        decoded, output = P.LSTMLinearModel(8, 6, 4, 1)(x)
        self.assertEqual((tuple(decoded.shape), tuple(output.shape)), ((3, 2, 4), (3, 2, 6)))
        model = P.LSTMLayerNormLinearModel(8, 6, 4, 2)
        result, (h, c) = model(x)
        self.assertEqual((tuple(result.shape), tuple(h.shape), tuple(c.shape)), ((3, 2, 4), (2, 2, 6), (2, 2, 6)))
        self.assertEqual([n for n, _ in model.named_children()], ["lstm", "norm", "linear"])

    def test_implemented_sparsifier(self):
        model = nn.Sequential()
        model.add_module("linear1", nn.Linear(4, 3))
        sparsifier = P.ImplementedSparsifier(test=3)
        self.assertEqual(sparsifier.defaults, {"test": 3})
        sparsifier.prepare(model, config=[{"tensor_fqn": "linear1.weight"}])
        sparsifier.step()
        sparsifier.step()
        self.assertEqual(sparsifier.state["linear1.weight"]["step_count"], 2)
        mask = model.linear1.parametrizations.weight[0].mask
        self.assertEqual(mask, torch.tensor([[0.0] * 4, [1.0] * 4, [1.0] * 4]))

    def test_mock_sparse_linear(self):
        made = P.MockSparseLinear.from_dense(nn.Linear(3, 4))
        self.assertIs(type(made), P.MockSparseLinear)
        self.assertEqual((made.in_features, made.out_features), (3, 4))

    def test_rows_are_subset(self):
        superset = torch.tensor([[0, 0], [1, 2], [5, 5], [3, 4]])
        rows = [
            ([[1, 2], [3, 4]], True),
            ([[1, 2], [1, 2]], True),  # one superset row may match several in a row
            ([[3, 4], [1, 2]], False),  # found only in the other order
            ([[7, 7]], False),
        ]
        for subset, expected in rows:
            with self.subTest(subset=subset):
                self.assertIs(P.rows_are_subset(torch.tensor(subset), superset), expected)
