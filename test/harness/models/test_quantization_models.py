"""Self-tests of ``TestHelperModules`` (``_engine/models/quantization_models.py``, face
``common_quantization``): each model's parameters and buffers, and the operations its exported
graph holds, in order (what quantization tests count), as upstream's models give them."""

import torch

from torch_testing_ext import common_quantization as Q
from torch_testing_ext.common_quantization import TestHelperModules
from torch_testing_ext.common_utils import TestCase

BN = {"bn.weight": (3,), "bn.bias": (3,), "bn.running_mean": (3,), "bn.running_var": (3,), "bn.num_batches_tracked": ()}


def _r(*shape):
    return torch.randn(*shape)


# name: (constructor arguments, inputs or None for its example_inputs(), state-dict shapes, exported aten ops)
MODELS = {
    "ConvLinearWPermute": ((), (_r(1, 3, 8, 8),),
                           {"conv.weight": (8, 3, 3, 3), "conv.bias": (8,), "linear1.weight": (8, 8),
                            "linear1.bias": (8,)},
                           ["conv2d", "permute", "linear"]),
    "TwoLinearModule": ((), None, {"linear1.weight": (16, 8), "linear2.weight": (8, 16), "linear2.bias": (8,)},
                        ["linear", "linear"]),
    "ConvMaxPool2d": ((), (_r(1, 2, 4, 4),), {"conv.weight": (2, 2, 1, 1), "conv.bias": (2,)},
                      ["conv2d", "max_pool2d"]),
    "ConvWithBNRelu": ((True,), (_r(1, 3, 6, 6),),
                       {"conv.weight": (3, 3, 3, 3), "conv.bias": (3,), **BN}, ["conv2d", "batch_norm", "relu"]),
    "ConvTWithBNRelu": ((False, 1, True, False), (_r(1, 3, 6),), {"convt.weight": (3, 3, 3), **BN},
                        ["conv_transpose1d", "batch_norm"]),
    "Conv2dThenConv1d": ((), None, {"conv1d.weight": (3, 3, 3), "conv1d.bias": (3,), "conv2d.weight": (3, 3, 3, 3),
                                    "conv2d.bias": (3,)}, ["conv2d", "squeeze", "conv1d"]),
    "Conv2dWithCat": ((), (_r(1, 3, 5, 5), _r(1, 3, 5, 5)), {"conv1.weight": (3, 3, 3, 3), "conv1.bias": (3,),
                                                            "conv2.weight": (3, 3, 3, 3), "conv2.bias": (3,)},
                      ["conv2d", "conv2d", "cat"]),
    "Conv2dWithTwoCat": ((), (_r(1, 3, 5, 5), _r(1, 3, 5, 5), _r(1, 6, 3, 3), _r(1, 6, 3, 3)),
                         {"conv1.weight": (3, 3, 3, 3), "conv1.bias": (3,), "conv2.weight": (3, 3, 3, 3),
                          "conv2.bias": (3,)},
                         ["conv2d", "conv2d", "cat", "add", "cat"]),
    "ThreeAdd": ((), (_r(2), _r(2), _r(2), _r(2)), {}, ["add", "add", "add"]),
    "EmbeddingModule": ((), (torch.tensor([1, 2]),), {"emb.weight": (10, 12)}, ["embedding"]),
    "EmbeddingConvLinearModule": ((), (torch.tensor([[1, 2, 3], [4, 5, 6]]),),
                                  {"emb.weight": (10, 8), "conv.weight": (16, 8, 1, 3), "conv.bias": (16,),
                                   "linear.weight": (8, 16), "linear.bias": (8,)},
                                  ["embedding", "unsqueeze", "permute", "conv2d", "permute", "squeeze", "linear"]),
    "ConvBnReLU2dAndLinearReLU": ((), (_r(1, 3, 6, 6),),
                                  {"conv_bn_relu.conv.weight": (3, 3, 3, 3), "conv_bn_relu.conv.bias": (3,),
                                   **{f"conv_bn_relu.{k}": v for k, v in BN.items()}, "linear.weight": (8, 3)},
                                  ["conv2d", "batch_norm", "relu", "permute", "linear"]),
    "GroupwiseConv2d": ((), None, {"conv.weight": (4, 2, 3, 3), "conv.bias": (4,)}, ["conv2d"]),
}


def _aten_ops(model, inputs):
    graph = torch.export.export(model, inputs).graph_module.graph
    return [str(n.target).split(".")[1] for n in graph.nodes if n.op == "call_function"]


class TestHelperModelsTest(TestCase):
    def test_parameters_and_exported_ops(self):
        for name, (args, inputs, shapes, ops) in MODELS.items():
            with self.subTest(name):
                model = getattr(TestHelperModules, name)(*args).eval()
                self.assertEqual(model.__class__.__qualname__, f"TestHelperModules.{name}")
                self.assertEqual({k: tuple(v.shape) for k, v in model.state_dict().items()}, shapes)
                self.assertEqual(_aten_ops(model, inputs or model.example_inputs()), ops)

    def test_control_flow_maps_over_conds(self):
        model = TestHelperModules.ControlFlow()
        inputs = model.example_inputs()
        exported = torch.export.export(model, inputs).graph_module
        self.assertIn("map_impl", [str(n.target) for n in exported.graph.nodes])
        self.assertEqual(sum(1 for name, _ in exported.named_modules() if name.endswith("_graph_0")), 5)
        # Both predicates false: row i of xs gives sin(cos(row) + cos(y @ y)), broadcast.
        xs, _, _, y = inputs
        expected = torch.stack([torch.sin(torch.cos(row) + torch.cos(torch.mm(y, y))) for row in xs])
        self.assertEqual(model(*inputs), expected)


class TestModuleLevelModels(TestCase):
    def test_layers_outputs_and_qconfigs(self):
        rows = [
            ("SingleLayerLinearModel", {"fc1.weight": (5, 5), "fc1.bias": (5,)}, (1, 5)),
            ("TwoLayerLinearModel", {"fc1.weight": (8, 5), "fc1.bias": (8,), "fc2.weight": (5, 8),
                                     "fc2.bias": (5,)}, (1, 5)),
            ("LinearAddModel", {"fc1.weight": (8, 5), "fc1.bias": (8,), "fc2.weight": (5, 8),
                                "fc2.bias": (5,)}, (1, 5)),
            ("ConvModel", {"conv.weight": (5, 3, 3, 3)}, (1, 5, 3, 3)),
            ("ConvBnReLUModel", {"conv.weight": (5, 3, 3, 3), "bn.weight": (5,), "bn.bias": (5,),
                                 "bn.running_mean": (5,), "bn.running_var": (5,), "bn.num_batches_tracked": ()},
                                (1, 5, 3, 3)),
            ("FunctionalLinear", {}, (1, 5)),
        ]
        for name, shapes, produced in rows:
            with self.subTest(name):
                model = getattr(Q, name)().eval()
                self.assertEqual({k: tuple(v.shape) for k, v in model.state_dict().items()}, shapes)
                self.assertEqual(tuple(model(*model.get_example_inputs()).shape), produced)
        model = Q.LinearAddModel()
        x = torch.rand(1, 5)
        self.assertEqual(model(x), model.fc2(model.fc1(x) + 5))
        functional = Q.FunctionalLinear()
        self.assertEqual(functional.bias, torch.zeros(5))
        self.assertTrue(Q.ConvBnReLUModel().relu.inplace)

    def test_manual_embedding_bag_linear(self):
        model = Q.ManualEmbeddingBagLinear()
        self.assertEqual([n for n, _ in model.named_children()], ["emb", "quant", "dequant", "linear"])
        self.assertEqual(model.emb.mode, "sum")
        self.assertIsNotNone(model.emb.qconfig)
        self.assertIsNotNone(model.qconfig)
        self.assertEqual(tuple(model(torch.tensor([1, 2, 3, 4]), torch.tensor([0, 2])).shape), (2, 1))
