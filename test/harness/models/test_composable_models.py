"""Self-tests of ``common_dist_composable``: the models' parameter and buffer names and shapes
(what the composable APIs' tests refer to), their forwards, and the nesting a wrap policy sees."""

import torch
from torch import nn

from torch_testing_ext.common_dist_composable import (
    CompositeModel,
    CompositeParamModel,
    FakeSequential,
    NestedSequentialModel,
    UnitModule,
    UnitParamModule,
)
from torch_testing_ext.common_utils import TestCase

UNIT = ["l1.bias", "l1.weight", "l2.bias", "l2.weight", "seq.1.bias", "seq.1.weight"]


class TestComposableModels(TestCase):
    def test_state_dict_keys(self):
        rows = [
            (UnitModule, UNIT),
            (CompositeModel, ["l1.bias", "l1.weight", "l2.bias", "l2.weight",
                              *(f"u{i}.{k}" for i in (1, 2) for k in UNIT)]),
            (UnitParamModule, ["l.bias", "l.weight", "p", "seq.1.bias", "seq.1.weight"]),
            (CompositeParamModel, ["buffer", "l.bias", "l.weight", "p", *(f"u{i}.{k}" for i in (1, 2) for k in UNIT)]),
        ]
        for cls, keys in rows:
            with self.subTest(cls=cls.__name__):
                self.assertEqual(sorted(cls("cpu").state_dict()), sorted(keys))

    def test_forwards(self):
        x = torch.randn(3, 100)
        for cls in (UnitModule, CompositeModel, UnitParamModule, CompositeParamModel):
            with self.subTest(cls=cls.__name__):
                model = cls(torch.device("cpu"))
                self.assertEqual(model(x).shape, torch.Size([3, 100]))
        composite = CompositeModel("cpu")
        self.assertEqual(composite(x), composite.l2(composite.u2(composite.u1(composite.l1(x)))))
        param_model = CompositeParamModel("cpu")
        self.assertEqual(param_model(x), param_model.u2(param_model.u1(param_model.l(x))) @ param_model.p)
        self.assertEqual(NestedSequentialModel("cpu")(torch.randn(5, 1)).shape, torch.Size([5, 4]))

    def test_the_buffer_is_persistent_and_p_a_parameter(self):
        model = CompositeParamModel("cpu")
        self.assertIn("buffer", model.state_dict())
        self.assertIn("p", dict(model.named_parameters()))

    def test_fake_sequential_runs_in_order_and_hides_its_modules(self):
        double, add_one = nn.Linear(1, 1, bias=False), nn.Linear(1, 1)
        with torch.no_grad():
            double.weight.fill_(2.0)
            add_one.weight.fill_(1.0)
            add_one.bias.fill_(1.0)
        fake = FakeSequential(double, add_one)
        self.assertEqual(fake(torch.tensor([[3.0]])), torch.tensor([[7.0]]))
        self.assertEqual(list(fake.children()), [])
        self.assertNotIsInstance(fake, nn.Sequential)

    def test_nested_model_tree(self):
        names = [(name, type(module).__name__) for name, module in NestedSequentialModel("cpu").named_modules()]
        self.assertEqual(names, [
            ("", "NestedSequentialModel"), ("seq1", "Sequential"), ("seq1.0", "Linear"),
            ("seq1.1", "FakeSequential"), ("seq1.2", "Linear"), ("lin", "Linear"), ("seq2", "Sequential"),
            ("seq2.0", "ReLU"), ("seq2.1", "Linear"), ("seq2.2", "FakeSequential"),
        ])
