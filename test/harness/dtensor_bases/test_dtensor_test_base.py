"""Self-tests of the DTensor bases (``distributed._tensor.common_dtensor``, ``dtensor_bases/``):
4 CPU ranks with gloo that shard, redistribute and parallelize; ``with_comms`` in every form;
the meshes, models, converter, shard orders and the LocalTensor variant of a class."""

import contextlib
import os
import unittest
from unittest import mock

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

from torch_testing_ext import devices
from torch_testing_ext._engine.dtensor_bases.dtensor_facts import default_world_size, mesh_device_type
from torch_testing_ext._engine.dtensor_bases.dtensor_test_base import init_dtensor_group
from torch_testing_ext._engine.dtensor_bases.local_tensor_cases import HAS_LOCAL_TENSOR
from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.distributed._tensor import common_dtensor
from torch_testing_ext.distributed._tensor.common_dtensor import (
    DEVICE_TYPE,
    NUM_DEVICES,
    PG_BACKEND,
    DTensorContinuousTestBase,
    DTensorConverter,
    DTensorOpTestBase,
    DTensorTestBase,
    MLPModule,
    MLPStacked,
    ModelArgs,
    RMSNormPython,
    Transformer,
    create_local_tensor_test_class,
    generate_shard_orders,
    make_full_tensor,
    patched_distribute_tensor,
    shard_order_to_placement,
    skip_unless_torch_gpu,
    with_comms,
)
from torch_testing_ext.distributed.fake_pg import FakeStore

from fixtures import dtensor_ranks
from fixtures.fake_devices import pretend_accelerator


class TestDTensorOnRanks(DTensorTestBase):
    """Runs on NUM_DEVICES ranks (4 CPU ranks with gloo here, 2 or 3 with as many GPUs)."""

    @with_comms
    def test_shard_replicate_partial(self):
        mesh = self.build_device_mesh()
        n = self.world_size
        full = torch.arange(4.0 * n, device=self.device_type).reshape(n, 4)
        sharded = distribute_tensor(full, mesh, [Shard(0)])
        self.assertEqual(sharded.placements, (Shard(0),))
        self.assertEqual(sharded.to_local(), full[self.rank:self.rank + 1])
        replicated = sharded.redistribute(mesh, [Replicate()])
        self.assertEqual(replicated.to_local(), full)
        # Partial: rank r holds (r + 1) * full; the whole tensor is their sum.
        partial = DTensor.from_local(replicated.to_local() * (self.rank + 1), mesh, [Partial()])
        total = full * (n * (n + 1) // 2)
        self.assertEqual(partial.redistribute(mesh, [Replicate()]).to_local(), total)
        self.assertEqual(partial.redistribute(mesh, [Shard(0)]).to_local(),
                         total[self.rank:self.rank + 1])
        self.assertEqual(partial.full_tensor(), total)

    @with_comms
    def test_bare_with_comms_makes_the_default_group(self):
        self.assertTrue(dist.is_initialized())
        self.assertEqual(dist.get_backend(), self.backend)
        self.assertEqual((dist.get_rank(), dist.get_world_size()), (self.rank, self.world_size))

    @with_comms()
    def test_with_comms_called_without_arguments(self):
        self.assertEqual(dist.get_backend(), self.backend)

    @with_comms(eager_init=True)
    def test_with_comms_eager_init(self):
        tensor = torch.full((2,), float(self.rank), device=self.device_type)
        dist.all_reduce(tensor)
        rank_sum = float(sum(range(self.world_size)))
        self.assertEqual(tensor.cpu(), [rank_sum, rank_sum])

    @with_comms(backend="gloo")
    def test_with_comms_backend(self):
        self.assertEqual(dist.get_backend(), "gloo")
        tensor = torch.ones(1)
        dist.all_reduce(tensor)
        self.assertEqual(tensor, [float(self.world_size)])

    @with_comms
    def test_build_device_mesh(self):
        mesh = self.build_device_mesh()
        self.assertEqual(mesh.device_type, self.device_type)
        self.assertEqual(mesh.shape, (self.world_size,))
        self.assertEqual(mesh.mesh.tolist(), list(range(self.world_size)))
        self.assertEqual(mesh.get_local_rank(), self.rank)

    @with_comms
    def test_mlp_colwise_rowwise_matches_the_unsharded_model(self):
        mesh = self.build_device_mesh()
        reference = MLPModule(self.device_type)
        sharded = parallelize_module(MLPModule(self.device_type), mesh,
                                     {"net1": ColwiseParallel(), "net2": RowwiseParallel()})
        self.assertEqual(sharded.net1.weight.to_local(),
                         reference.net1.weight.chunk(self.world_size)[self.rank])
        x = torch.rand(3, 10, device=self.device_type)
        self.assertEqual(sharded(x), reference(x))
        sharded(x).sum().backward()
        reference(x).sum().backward()
        self.assertEqual(sharded.net2.weight.grad.full_tensor(), reference.net2.weight.grad)

    @with_comms
    def test_transformer_tensor_parallel_matches_the_unsharded_model(self):
        mesh = self.build_device_mesh()
        args = ModelArgs(dropout_p=0.0)
        torch.manual_seed(0)
        reference = Transformer(args).to(self.device_type)
        torch.manual_seed(0)
        model = Transformer(args).to(self.device_type)
        # Attention on local heads: DTensor has no CPU sharding rule for fused attention.
        Transformer.parallelize(model, mesh, use_seq_parallel=False, local_output_for_attn=True)
        self.assertIsInstance(model.layers[0].attention.wq.weight, DTensor)
        self.assertIs(model.output.weight, model.tok_embeddings.weight)
        tokens = torch.randint(0, args.vocab_size, (2, 8), device=self.device_type)
        self.assertEqual(model(tokens), reference(tokens))

    @with_comms
    def test_expert_parallel_matches_the_unsharded_experts(self):
        mesh = self.build_device_mesh()
        args = ModelArgs(dropout_p=0.0, num_experts=self.world_size)
        torch.manual_seed(0)
        reference = Transformer(args).to(self.device_type)
        torch.manual_seed(0)
        model = Transformer.parallelize(Transformer(args).to(self.device_type), None,
                                        use_seq_parallel=False, ep_mesh=mesh)
        self.assertEqual(model.layers[0].expert_layer.experts.w1.to_local().shape[0], 1)
        tokens = torch.randint(0, args.vocab_size, (self.world_size, 4), device=self.device_type)
        mine = tokens.chunk(self.world_size)[self.rank]
        self.assertEqual(model(mine), reference(tokens).chunk(self.world_size)[self.rank])

    @with_comms
    def test_op_on_every_sharding(self):
        mesh = self.build_device_mesh()
        n = self.world_size
        x, y = torch.randn(n, 2 * n), torch.randn(n, 2 * n)
        self._test_op(mesh, torch.add, x, y)
        converter = DTensorConverter(mesh, (x, y), {})
        self.assertEqual(len(list(converter)), 9)  # Replicate, Shard(0), Shard(1) for each
        self.assertEqual((converter.hit, converter.miss), (18, 0))


class TestFourRanks(DTensorTestBase):
    world_size = 4  # a 2 x 2 mesh, whatever NUM_DEVICES is

    @with_comms
    def test_shard_orders(self):
        mesh = init_device_mesh(self.device_type, (2, 2))
        orders = list(generate_shard_orders(mesh, 2))
        # For each of the 2 orderings of the mesh dims: both on dim 0, both on dim 1, or one each.
        self.assertEqual(len(orders), 6)
        self.assertEqual(sorted({tuple((e.tensor_dim, e.mesh_dims) for e in o) for o in orders}),
                         [((0, (0,)), (1, (1,))), ((0, (0, 1)),), ((0, (1,)), (1, (0,))),
                          ((0, (1, 0)),), ((1, (0, 1)),), ((1, (1, 0)),)])
        full = torch.arange(32.0).reshape(8, 4)
        for order in orders:
            dt = patched_distribute_tensor(full, mesh, None, order)
            self.assertEqual(dt.placements, shard_order_to_placement(order, mesh))
            self.assertEqual(make_full_tensor(dt), full)


class TestTwoRanks(DTensorTestBase):
    world_size = 2

    @with_comms
    def test_mesh_follows_world_size(self):
        self.assertEqual(self.build_device_mesh().shape, (2,))
        self.assertEqual(dist.get_world_size(), 2)


class TestOpBase(DTensorOpTestBase):
    def test_group_exists_without_with_comms(self):
        self.assertTrue(dist.is_initialized())
        mesh = self.build_device_mesh()
        dt = distribute_tensor(torch.ones(4, 4, device=self.device_type), mesh, [Shard(1)])
        self.assertEqual((dt + dt).full_tensor().cpu(), torch.full((4, 4), 2.0))

    @with_comms
    def test_with_comms_passes_through(self):
        self.assertTrue(dist.is_initialized())  # the rank's group, not a second one

    def test_assert_equal_on_rank_checks_on_that_rank_only(self):
        self.assertEqualOnRank(self.rank, 0)
        self.assertEqualOnRank(self.rank, 1, rank=1)
        self.assertNotEqualOnRank(self.rank, 1)
        with contextlib.ExitStack() as stack:
            if self.rank == 0:
                stack.enter_context(self.assertRaises(AssertionError))
            self.assertEqualOnRank(1, 2, "differs")


class Recorder:
    """A stand-in for a DTensor test: records init_pg/destroy_pg calls."""

    def __init__(self):
        self.calls = []

    def init_pg(self, eager_init, backend=None):
        self.calls.append(("init", eager_init, backend))

    def destroy_pg(self):
        self.calls.append(("destroy",))


def pretend_dtensor_facts(accelerator, count):
    """The face's machine facts patched as upstream's tests patch common_dtensor's globals."""
    return mock.patch.multiple(common_dtensor, TEST_CUDA=accelerator == "cuda", TEST_XPU=accelerator == "xpu",
                               TEST_HPU=False, TEST_PRIVATEUSE1=False, DEVICE_COUNT=count,
                               DEVICE_TYPE=accelerator or "cpu")


class TestWithComms(TestCase):
    def test_every_call_form(self):
        forms = {
            "bare": (with_comms, (False, None)),
            "called": (with_comms(), (False, None)),
            "eager": (with_comms(eager_init=True), (True, None)),
            "positional": (with_comms(True), (True, None)),
            "backend": (with_comms(backend="gloo"), (False, "gloo")),
            "both": (with_comms(eager_init=True, backend="gloo"), (True, "gloo")),
        }
        for name, (decorator, (eager, backend)) in forms.items():
            with self.subTest(name):
                test = Recorder()
                wrapped = decorator(lambda self, x: self.calls.append(("ran", x)) or "result")
                self.assertEqual(wrapped(test, 7), "result")
                self.assertEqual(test.calls, [("init", eager, backend), ("ran", 7), ("destroy",)])

    def test_failure_destroys_the_group_without_waiting(self):
        test = Recorder()
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)

        @with_comms
        def failing(self):
            raise ValueError("boom")

        with self.assertRaisesRegex(ValueError, "boom"):
            failing(test)
        self.assertFalse(dist.is_initialized())
        self.assertEqual(test.calls, [("init", False, None)])  # no destroy_pg barrier

    def test_without_init_pg_the_method_runs_as_it_is(self):
        self.assertEqual(with_comms(lambda self: "ran")(object()), "ran")

    def test_keeps_parent_side_skips(self):
        @with_comms
        @skip_unless_torch_gpu
        def needs_gpu(self):
            pass

        self.assertTrue(hasattr(needs_gpu, "__tte_skip_checks__"))

    def test_bad_arguments(self):
        with self.assertRaisesRegex(TypeError, "eager_init must be a bool, not str"):
            with_comms("yes")
        with self.assertRaisesRegex(TypeError, "backend must be a str"):
            with_comms(backend=3)

    def test_unknown_backend(self):
        test = Recorder()
        test.backend, test.world_size, test.rank = "gloo", 2, 0
        with self.assertRaisesRegex(ValueError, "backend 'nosuch' not supported"):
            init_dtensor_group(test, backend="nosuch")


class TestDefaults(TestCase):
    def test_device_facts(self):
        self.assertEqual(DEVICE_TYPE, devices.device_type())
        self.assertEqual(PG_BACKEND, devices.default_backend(DEVICE_TYPE))
        self.assertEqual(NUM_DEVICES, default_world_size())

    def test_world_size_and_device_type_on_other_machines(self):
        # (accelerator, devices): (NUM_DEVICES, its mesh device type, 4 ranks' mesh device type)
        machines = {
            (None, 0): (4, "cpu", "cpu"),
            ("cuda", 1): (4, "cpu", "cpu"),
            ("cuda", 2): (2, "cuda", "cpu"),
            ("cuda", 3): (3, "cuda", "cpu"),
            ("cuda", 8): (4, "cuda", "cuda"),
            ("xpu", 4): (4, "xpu", "xpu"),
        }
        for (accelerator, count), expected in machines.items():
            # The device counts come from the machine, the mesh's choice from the face's globals
            # (upstream's tests patch those).
            with self.subTest(accelerator=accelerator, count=count), \
                    pretend_accelerator(accelerator, count), pretend_dtensor_facts(accelerator, count):
                world_size = default_world_size()
                self.assertEqual((world_size, mesh_device_type(world_size), mesh_device_type(4)),
                                 expected)

    def test_bases_choose_by_the_faces_globals_as_upstreams_do(self):
        class Continuous(DTensorContinuousTestBase):
            world_size = 4

            def test_x(self):
                pass

        class PerTest(DTensorTestBase):
            world_size = 4

            def test_x(self):
                pass

        for count, expected in ((0, ("cpu", "gloo")), (3, ("cpu", "gloo")), (4, ("cuda", "nccl"))):
            with self.subTest(count=count), pretend_dtensor_facts("cuda", count):
                self.assertEqual((Continuous("test_x").device_type, Continuous.backend_str()), expected)
                case = PerTest("test_x")
                self.assertEqual((case.device_type, case.backend), expected)
        self.assertEqual(Continuous.backend_str(), devices.default_backend(mesh_device_type(4)))

    def test_base_in_the_test_process(self):
        test = TestDTensorOnRanks("test_build_device_mesh")
        self.assertEqual(test.world_size, NUM_DEVICES)
        enough = devices.accelerator_type() is not None and devices.device_count() >= NUM_DEVICES
        self.assertEqual(test.device_type, DEVICE_TYPE if enough else "cpu")
        self.assertEqual(test.backend, devices.default_backend(test.device_type))

    def test_skip_unless_torch_gpu(self):
        class Cases(DTensorTestBase):
            @skip_unless_torch_gpu
            def test_x(self):
                pass

        result = unittest.TestResult()
        Cases("test_x").run(result)
        if devices.accelerator_type() and devices.device_count() >= NUM_DEVICES:
            self.assertEqual(result.skipped, [])
        else:
            self.assertEqual(len(result.skipped), 1)
            self.assertIn("needs a GPU", result.skipped[0][1])


class TestModels(TestCase):
    def test_parameter_names_and_shapes(self):
        shapes = {n: tuple(p.shape) for n, p in MLPModule("cpu").named_parameters()}
        self.assertEqual(shapes, {"net1.weight": (16, 10), "net1.bias": (16,),
                                  "net2.weight": (10, 16), "net2.bias": (10,)})
        self.assertEqual(MLPModule("cpu").net1.weight, MLPModule("cpu").net1.weight)  # seeded
        self.assertEqual(len(MLPStacked("cpu", n_layers=3).layers), 3)
        names = [n for n, _ in Transformer(ModelArgs(n_layers=1)).named_parameters()]
        self.assertEqual(names[:3], ["tok_embeddings.weight", "pos_embeddings.weight",
                                     "layers.0.attention_norm.weight"])
        self.assertIn("layers.0.attention.wq.weight", names)
        self.assertIn("layers.0.feed_forward.w2.bias", names)
        self.assertNotIn("output.weight", names)  # tied to tok_embeddings

    def test_rms_norm(self):
        x = torch.tensor([[3.0, 4.0]])
        self.assertEqual(RMSNormPython(2, eps=0.0)(x), x / (12.5 ** 0.5))

    def test_parallelize_needs_a_transformer_and_a_mesh(self):
        with self.assertRaisesRegex(TypeError, "needs a Transformer, not MLPModule"):
            Transformer.parallelize(MLPModule("cpu"), None, use_seq_parallel=False)
        with self.assertRaisesRegex(ValueError, "needs tp_mesh, ep_mesh or both"):
            Transformer.parallelize(Transformer(ModelArgs(n_layers=1)), None, use_seq_parallel=False)


class TestLocalTensorVariant(TestCase):
    def test_runs_every_rank_in_this_process(self):
        cls = create_local_tensor_test_class(dtensor_ranks.LocalTensorCases,
                                             skipped_tests=["test_not_for_local_tensor"])
        self.assertEqual(cls.__name__, "LocalTensorCasesWithLocalTensor")
        dtensor_ranks.LocalTensorCases.pids.clear()
        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(cls).run(result)
        if not HAS_LOCAL_TENSOR:
            self.assertEqual(len(result.skipped), 3)
            self.assertIn("LocalTensor is not in torch", result.skipped[0][1])
            return
        self.assertEqual(result.testsRun, 3)
        # A per-rank mismatch under LocalTensor fails or errors (its truth differs per rank).
        self.assertEqual([t.id().rsplit(".", 1)[1] for t, _ in result.failures + result.errors],
                         ["test_wrong_shard"])
        self.assertEqual([(t.id().rsplit(".", 1)[1], "create_local_tensor_test_class" in why)
                          for t, why in result.skipped], [("test_not_for_local_tensor", True)])
        self.assertEqual(dtensor_ranks.LocalTensorCases.pids, [os.getpid()])
        self.assertFalse(dist.is_initialized())

    def test_unknown_skipped_test_is_warned_about(self):
        with self.assertWarnsRegex(UserWarning, "has no test_nope to skip"):
            create_local_tensor_test_class(dtensor_ranks.LocalTensorCases, skipped_tests=["test_nope"])
