"""Self-tests of the sharded-tensor bases (``distributed._shard.sharded_tensor`` and its
``_test_st_common``/``_test_ops_common``, ``sharded_tensor_bases/``): 4 CPU ranks with gloo
(and RPC) that make sharded tensors from the generated specs and check their values across
ranks; ``with_comms`` in every form, skipping before any rank starts where it needs GPUs; a
failure on one rank named; the spec generators, weight chunk positions, models and op helpers."""

import unittest

import torch
import torch.distributed as dist
from torch.distributed import rpc
from torch.distributed._shard import shard_module, shard_parameter, sharded_tensor
from torch.distributed._shard.sharding_plan import ShardingPlan
from torch.distributed._shard.sharding_spec import ChunkShardingSpec, EnumerableShardingSpec

from torch_testing_ext import devices
from torch_testing_ext._engine.sharded_tensor_bases import sharded_test_base
from torch_testing_ext._engine.sharded_tensor_bases.spec_makers import chunk_sizes
from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.distributed._shard.sharded_tensor import (
    TEST_GPU_NUM,
    ShardedTensorTestBase,
    with_comms,
)
from torch_testing_ext.distributed._shard.sharded_tensor._test_ops_common import (
    clone_module_parameter,
    gen_binary_op_func,
    generate_chunk_sharding_specs_for_test,
    generate_enumerable_sharding_specs_for_test,
    generate_local_weight_sharding_params_for_test,
)
from torch_testing_ext.distributed._shard.sharded_tensor._test_st_common import (
    DEFAULT_GPU_NUM,
    PLACEMENTS,
    MyShardedModel1,
    MyShardedModel2,
    _chunk_sharding_specs_list_for_test,
)
from torch_testing_ext.distributed._shard.test_common import SimpleMegatronLM

from fixtures import sharded_tensor_ranks
from fixtures.runs import assert_outcomes, run_case

CPU_ONLY = devices.accelerator_type() is None
NEEDS_CPU_ONLY = "checks what a machine without accelerators does; this one has a " \
                 f"{devices.accelerator_type()}"


def _ranks_of(spec):
    return [p.rank() for p in spec.placements]


class TestShardedTensorOnRanks(ShardedTensorTestBase):
    """4 ranks (TEST_GPU_NUM); on this machine CPU ranks with gloo."""

    def _cpu_spec(self, dim):
        return ChunkShardingSpec(dim=dim, placements=[f"rank:{r}/cpu" for r in range(self.world_size)])

    @with_comms(init_rpc=False, backend="gloo")
    def test_chunk_sharded_tensor_holds_each_ranks_rows(self):
        self.assertEqual(self.world_size, 4)
        self.assertEqual((dist.get_backend(), dist.get_world_size(), dist.get_rank()),
                         ("gloo", 4, self.rank))
        full = torch.arange(30.0).reshape(10, 3)  # rows chunk as 3, 3, 3, 1
        st = sharded_tensor.zeros(self._cpu_spec(0), 10, 3)
        start = [0, 3, 6, 9][self.rank]
        st.local_tensor().copy_(full[start:start + [3, 3, 3, 1][self.rank]])
        (shard,) = st.local_shards()
        self.assertEqual(shard.metadata.shard_offsets, [start, 0])
        self.assertEqual(str(shard.metadata.placement), f"rank:{self.rank}/cpu")
        # Every rank's rows reach rank 0 intact.
        out = torch.empty(10, 3) if self.rank == 0 else None
        st.gather(dst=0, out=out)
        if self.rank == 0:
            self.assertEqual(out, full)
        # And every rank sees the others' sums.
        sums = [torch.zeros(()) for _ in range(self.world_size)]
        dist.all_gather(sums, st.local_tensor().sum())
        self.assertEqual(torch.stack(sums), torch.tensor([36.0, 117.0, 198.0, 84.0]))

    @with_comms(init_rpc=False, backend="gloo")
    def test_generated_chunk_specs_shard_like_the_local_weight_params(self):
        for dim in (0, 1):
            for spec in generate_chunk_sharding_specs_for_test(dim):
                torch.manual_seed(0)  # the same weight on every rank
                linear = torch.nn.Linear(7, 10)
                full = clone_module_parameter(linear, "weight")
                shard_parameter(linear, "weight", spec)
                start, length = generate_local_weight_sharding_params_for_test(full, dim, TEST_GPU_NUM,
                                                                               spec, self.rank)
                self.assertEqual(linear.weight.local_tensor(), full.detach().narrow(dim, start, length),
                                 msg=f"dim {dim}, ranks {_ranks_of(spec)}")

    @with_comms(init_rpc=False, backend="gloo")
    def test_generated_enumerable_spec_places_a_block_per_rank(self):
        (spec,) = generate_enumerable_sharding_specs_for_test()
        st = sharded_tensor.ones(spec, 10, 10)
        (shard,) = st.local_shards()
        self.assertEqual(shard.metadata.shard_offsets, [[0, 0], [5, 0], [0, 5], [5, 5]][self.rank])
        self.assertEqual(st.local_tensor(), torch.ones(5, 5))

    @with_comms(init_rpc=False, backend="gloo")
    def test_seeded_specs_and_models_without_rpc(self):
        for spec in _chunk_sharding_specs_list_for_test([0, 1], seed=5):
            model = MyShardedModel1(spec, init_rrefs=False)
            self.assertEqual(model.sharded_tensor1.size(), torch.Size([10, 20]))
            self.assertEqual(model.submodule.sharded_tensor2.sharding_spec(), spec)
            position = _ranks_of(spec).index(self.rank)  # this rank's chunk along spec.dim
            expected = torch.rand(10, 20).chunk(4, spec.dim)[position].shape
            self.assertEqual(model.sharded_tensor1.local_tensor().shape, expected)
        self.assertFalse(rpc.is_available() and sharded_test_base._rpc_running(), "RPC is up with init_rpc=False")

    @with_comms(init_rpc=False, backend="gloo")
    def test_megatron_weights_sharded_by_a_plan(self):
        torch.manual_seed(0)  # the same module on every rank
        model = SimpleMegatronLM([[17, 12], [12, 29]], rank=self.rank)
        full1, full2 = (w.detach().clone() for w in model.get_weights())
        colwise, rowwise = generate_chunk_sharding_specs_for_test(0)[0], generate_chunk_sharding_specs_for_test(1)[0]
        shard_module(model, ShardingPlan(plan={"fc1.weight": colwise, "fc2.weight": rowwise}))
        local1, local2 = model.get_weights()
        self.assertEqual(local1, full1.chunk(4, 0)[self.rank])
        self.assertEqual(local2, full2.chunk(4, 1)[self.rank])

    @with_comms(backend="gloo")
    def test_with_rpc_each_rank_is_a_worker_with_remote_shards(self):
        self.assertEqual(rpc.get_worker_info().name, f"worker{self.rank}")
        spec = _chunk_sharding_specs_list_for_test([0], seed=3)[0]
        st = sharded_tensor.rand(spec, 10, 20, init_rrefs=True)
        self.assertEqual(sorted(st.remote_shards()), [r for r in range(4) if r != self.rank])
        self.assert_sharded_tensor_equal(st, st)
        other = MyShardedModel2(spec).sharded_tensor2  # init_rrefs=True by default, as upstream
        with self.assertRaises(AssertionError):
            self.assert_sharded_tensor_equal(st, other)  # same layout, other values


class TestShardedTensorHarness(TestCase):
    """Outcomes of the fixture classes, run here: skips decided before any rank, failures named."""

    def test_a_failure_on_one_rank_names_that_rank(self):
        result = run_case(sharded_tensor_ranks.ShardedCases, "test_wrong_value_on_rank2")
        assert_outcomes(self, result, failed=1)
        report = "\n".join(text for _, text in result.failures)
        self.assertIn("1 of 4 ranks did not pass (rank 2)", report)
        self.assertIn("[rank 2] AssertionError", report)
        self.assertNotIn("rank 0 failed", report)

    def test_an_error_with_rpc_up_names_the_rank_and_ends(self):
        result = run_case(sharded_tensor_ranks.ShardedCases, "test_rpc_raises_on_rank1")
        assert_outcomes(self, result, errors=1)
        report = "\n".join(text for _, text in result.errors)
        self.assertIn("[rank 1] ValueError: rank one raised with RPC up", report)
        self.assertNotIn("[rank 0] ValueError", report)

    def test_a_two_rank_class(self):
        assert_outcomes(self, run_case(sharded_tensor_ranks.TwoRankCases, "test_two_ranks"), passed=1)

    @unittest.skipUnless(CPU_ONLY, NEEDS_CPU_ONLY)
    def test_nccl_forms_skip_on_cpu_with_the_reason(self):
        for name in ("test_bare_with_comms", "test_nccl_without_rpc"):
            result = run_case(sharded_tensor_ranks.ShardedCases, name)
            assert_outcomes(self, result, skipped=1)
            (_, reason), = result.skipped
            self.assertIn("backend 'nccl' needs 4 accelerator devices; this machine has none", reason)

    @unittest.skipUnless(CPU_ONLY, NEEDS_CPU_ONLY)
    def test_an_inner_gpu_skip_decorator_still_skips(self):
        result = run_case(sharded_tensor_ranks.ShardedCases, "test_inner_skip_decorator")
        assert_outcomes(self, result, skipped=1)
        self.assertIn("Need at least 4", result.skipped[0][1])

    @unittest.skipUnless(CPU_ONLY, NEEDS_CPU_ONLY)
    def test_init_pg_on_nccl_in_a_rank_skips_on_cpu(self):
        result = run_case(sharded_tensor_ranks.ShardedCases, "test_init_pg_default_in_body")
        assert_outcomes(self, result, skipped=1)
        self.assertIn("backend 'nccl' needs 4 accelerator devices", result.skipped[0][1])

    def test_init_pg_refuses_an_unknown_backend(self):
        with self.assertRaisesRegex(ValueError, "backend 'tcp' not supported: expected one of gloo"):
            sharded_tensor_ranks.ShardedCases("test_wrong_value_on_rank2").init_pg("tcp")

    def test_with_comms_refuses_bad_arguments(self):
        with self.assertRaisesRegex(TypeError, "init_rpc must be a bool"):
            with_comms(init_rpc="no")
        with self.assertRaisesRegex(ValueError, "backend 'tcp' not supported"):
            with_comms(backend="tcp")
        with self.assertRaisesRegex(TypeError, "decorates a test method, not bool"):
            with_comms(False)

    def test_with_comms_keeps_the_method_name(self):
        self.assertEqual(sharded_tensor_ranks.ShardedCases.test_bare_with_comms.__name__, "test_bare_with_comms")
        self.assertEqual(sharded_tensor_ranks.ShardedCases.test_nccl_without_rpc.__name__, "test_nccl_without_rpc")

    def test_the_faces_define_nothing_of_their_own(self):
        import torch_testing_ext.distributed._shard.sharded_tensor as face
        import torch_testing_ext.distributed._shard.sharded_tensor._test_ops_common as ops_face
        import torch_testing_ext.distributed._shard.sharded_tensor._test_st_common as st_face
        import torch_testing_ext.distributed._shard.test_common as common_face

        for module in (face, ops_face, st_face, common_face):
            for name in module.__all__:
                value = getattr(module, name)
                home = getattr(value, "__module__", None)
                if home is not None and callable(value):
                    self.assertNotIn("torch_testing_ext.distributed", home, f"{module.__name__}.{name}")
        self.assertEqual(face.TEST_SKIPS["multi-gpu-4"].exit_code, 81)
        self.assertTrue(issubclass(face.ShardedTensorTestBase, face.MultiProcessTestCase))

    def test_world_size_defaults_to_test_gpu_num(self):
        self.assertEqual(TEST_GPU_NUM, 4)
        self.assertEqual(sharded_tensor_ranks.ShardedCases("test_bare_with_comms").world_size, 4)
        self.assertEqual(sharded_tensor_ranks.TwoRankCases("test_two_ranks").world_size, 2)


class TestSpecGenerators(TestCase):
    def test_chunk_specs_three_rank_orders_on_the_machines_devices(self):
        for dim in (0, 1, -1):
            specs = generate_chunk_sharding_specs_for_test(dim)
            self.assertEqual([s.dim for s in specs], [dim] * 3)
            self.assertEqual([_ranks_of(s) for s in specs], [[0, 1, 2, 3], [2, 3, 0, 1], [3, 0, 1, 2]])
            for spec in specs:
                self.assertEqual([str(p.device()) for p in spec.placements],
                                 [devices.rank_device(r) for r in _ranks_of(spec)])
        self.assertEqual(PLACEMENTS, [f"rank:{r}/{devices.rank_device(r)}" for r in range(4)])
        self.assertEqual(DEFAULT_GPU_NUM, 4)

    def test_seeded_specs_are_upstreams_first_call_orders_and_do_not_drift(self):
        # Upstream's orders on a process's first call (torch.testing._internal, torch 2.13).
        first = _chunk_sharding_specs_list_for_test([0, 1], seed=5)
        self.assertEqual([(s.dim, _ranks_of(s)) for s in first], [(0, [0, 1, 3, 2]), (1, [2, 3, 1, 0])])
        again = _chunk_sharding_specs_list_for_test([0, 1], seed=5)
        self.assertEqual(again, first)
        self.assertEqual(len(_chunk_sharding_specs_list_for_test([0, 0, 1, 1], seed=31)), 4)
        self.assertEqual(_chunk_sharding_specs_list_for_test([]), [])

    def test_enumerable_spec_covers_a_10x10_tensor_in_four_blocks(self):
        (spec,) = generate_enumerable_sharding_specs_for_test()
        self.assertIsInstance(spec, EnumerableShardingSpec)
        self.assertEqual([(m.shard_offsets, m.shard_sizes, m.placement.rank()) for m in spec.shards],
                         [([0, 0], [5, 5], 0), ([5, 0], [5, 5], 1), ([0, 5], [5, 5], 2), ([5, 5], [5, 5], 3)])

    def test_chunk_sizes_are_torch_chunks(self):
        for size in range(0, 13):
            for chunks in (1, 2, 3, 4):
                expected = [len(c) for c in torch.arange(size).chunk(chunks)]
                self.assertEqual(chunk_sizes(size, chunks), expected + [0] * (chunks - len(expected)),
                                 msg=f"{size} in {chunks}")

    def test_local_weight_params_follow_the_placement_order(self):
        weight = torch.zeros(10, 5)
        in_order, from_2, _ = generate_chunk_sharding_specs_for_test(0)
        # 10 rows in 4 chunks: 3, 3, 3, 1.
        self.assertEqual([generate_local_weight_sharding_params_for_test(weight, 0, 4, in_order, r)
                          for r in range(4)], [(0, 3), (3, 3), (6, 3), (9, 1)])
        # Order 2, 3, 0, 1: rank 2 first.
        self.assertEqual([generate_local_weight_sharding_params_for_test(weight, 0, 4, from_2, r)
                          for r in range(4)], [(6, 3), (9, 1), (0, 3), (3, 3)])
        # 5 columns in 4 chunks: 2, 2, 1, 0.
        cols = generate_chunk_sharding_specs_for_test(1)[0]
        self.assertEqual([generate_local_weight_sharding_params_for_test(weight, 1, 4, cols, r)
                          for r in range(4)], [(0, 2), (2, 2), (4, 1), (5, 0)])
        with self.assertRaisesRegex(ValueError, "rank 4 has no placement"):
            generate_local_weight_sharding_params_for_test(weight, 0, 4, in_order, 4)


class TestModelsAndHelpers(TestCase):
    def test_models_without_a_spec(self):
        model = MyShardedModel1()
        self.assertIsNone(model.sharded_tensor1)
        self.assertIsNone(model.submodule.sharded_tensor2)
        self.assertIsInstance(model.submodule, MyShardedModel2)
        self.assertEqual({n: tuple(p.shape) for n, p in model.named_parameters()},
                         {"random_tensor1": (2, 2), "submodule.random_tensor2": (2, 2)})

    def test_simple_megatron_lm(self):
        torch.manual_seed(0)
        model = SimpleMegatronLM([[5, 4], [4, 3]], rank=0, dtype=torch.float64)
        self.assertEqual(model.fc1.weight.device, torch.device(devices.rank_device(0)))
        self.assertEqual((model.fc1.weight.shape, model.fc2.weight.shape, model.fc1.weight.dtype),
                         (torch.Size([4, 5]), torch.Size([3, 4]), torch.float64))
        x = torch.randn(2, 5, dtype=torch.float64, device=model.fc1.weight.device)
        hidden = torch.nn.functional.gelu(x @ model.fc1.weight.T + model.fc1.bias)
        expected = hidden @ model.fc2.weight.T + model.fc2.bias
        out = model(x)
        self.assertEqual(out, expected)
        self.assertEqual(model.get_weights(), (model.fc1.weight, model.fc2.weight))
        self.assertEqual(model.get_biases(), (model.fc1.bias, model.fc2.bias))
        self.assertEqual(model.get_weight_grads(), (None, None))
        out.sum().backward()
        self.assertEqual(model.get_weight_grads(), (model.fc1.weight.grad, model.fc2.weight.grad))
        self.assertEqual(model.get_bias_grads()[1], torch.full((3,), 2.0, dtype=torch.float64))
        self.assertIsNone(SimpleMegatronLM([[2, 2, False], [2, 2]]).fc1.bias)

    def test_clone_module_parameter_is_a_detached_copy(self):
        linear = torch.nn.Linear(3, 2)
        clone = clone_module_parameter(linear, "weight")
        self.assertIsInstance(clone, torch.nn.Parameter)
        self.assertTrue(clone.requires_grad)
        self.assertEqual(clone, linear.weight)
        self.assertNotEqual(clone.data_ptr(), linear.weight.data_ptr())
        with torch.no_grad():
            clone.add_(1)
        self.assertEqual(clone, linear.weight + 1)

    def test_gen_binary_op_func(self):
        lhs, rhs = torch.tensor([1.0, 4.0, 6.0]), torch.tensor([2.0, 4.0, 3.0])
        self.assertEqual(gen_binary_op_func("+")(lhs, rhs), [3.0, 8.0, 9.0])
        self.assertEqual(gen_binary_op_func("-")(lhs, rhs), [-1.0, 0.0, 3.0])
        self.assertEqual(gen_binary_op_func("/")(lhs, rhs), [0.5, 1.0, 2.0])
        self.assertEqual(gen_binary_op_func("<=")(lhs, rhs), [True, True, False])
        self.assertEqual(gen_binary_op_func("==")(lhs, rhs), [False, True, False])
        self.assertEqual(gen_binary_op_func("torch.mul")(lhs, rhs), [2.0, 16.0, 18.0])
        self.assertEqual(gen_binary_op_func("torch.nn.functional.mse_loss")(lhs, rhs), torch.tensor(10 / 3))
        target = lhs.clone()
        result = gen_binary_op_func("*", inplace=True)(target, rhs)
        self.assertIs(result, target)
        self.assertEqual(target, [2.0, 16.0, 18.0])
        self.assertEqual(gen_binary_op_func("+", inplace=False)(lhs, rhs), [3.0, 8.0, 9.0])
        self.assertEqual(lhs, [1.0, 4.0, 6.0])

    def test_gen_binary_op_func_refuses_what_it_does_not_know(self):
        with self.assertRaisesRegex(ValueError, "'<>' is not a binary operator"):
            gen_binary_op_func("<>")
        with self.assertRaisesRegex(ValueError, "'<' is not an in-place operator"):
            gen_binary_op_func("<", inplace=True)
        with self.assertRaisesRegex(ValueError, "torch has no 'torch.no_such_op'"):
            gen_binary_op_func("torch.no_such_op")
