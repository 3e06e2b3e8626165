"""Self-tests of the long tail of names upstream test files import: ``common_fsdp``'s helpers
and extra models, ``distributed.common_state_dict``, ``distributed.distributed_utils`` and
``distributed.rpc_utils``, ``dist_utils.dist_init``. Each checks upstream's meaning on CPU ranks with gloo (or in one
process where no group is needed), and that a wrong result fails, naming what differs.
"""

import copy
import re
import unittest
from unittest import mock

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
)
from torch.distributed.fsdp import FullyShardedDataParallel, fully_shard
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
from torch.distributed.fsdp.wrap import enable_wrap

from torch_testing_ext import common_fsdp, devices
from torch_testing_ext._engine.models import fsdp1_variants
from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_fsdp import (
    MLP,
    DEVICEInitMode,
    DummyDDP,
    DummyProcessGroup,
    FSDPInitMode,
    FSDPTest,
    MixtureOfExperts,
    ModuleWithDelay,
    NestedWrappedModule,
    NestedWrappedModuleWithDelay,
    NonUniformReqGradNWM,
    SkipModel,
    _assert_module_states,
    _broadcast_state_dict,
    _get_state_dict,
    _maybe_wrap_fsdp,
    _move_to_device,
    _zero_model,
    subtest_name,
)
from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.distributed import common_state_dict, distributed_utils, rpc_utils
from torch_testing_ext.distributed.common_state_dict import (
    FusionEmbedding,
    FusionEmbeddingWithHook,
    FusionEmbeddingWithModifier,
    VerifyStateDictMixin,
)
from torch_testing_ext.distributed.distributed_utils import (
    MockProcessGroup,
    mock_init_dist,
    with_dist,
    with_fake_comms,
)
from torch_testing_ext.distributed.rpc.faulty_rpc_agent_test_fixture import FaultyRpcAgentTestFixture
from torch_testing_ext.distributed.rpc.tensorpipe_rpc_agent_test_fixture import TensorPipeRpcAgentTestFixture

DEVICE = devices.device_type()


def fsdp_kwargs():
    """FSDP1 needs device_id=cpu on a CPU-only machine."""
    return {"device_id": torch.device("cpu")} if devices.accelerator_type() is None else {}


class TestSubtestNameAndDummyGroup(TestCase):
    def test_subtest_name_joins_mapped_names_and_none(self):
        mapping = {"True": "on", "False": "off", "cpu": "CPU"}
        self.assertEqual(subtest_name(mapping, True, None, "cpu"), "on_none_CPU")
        self.assertEqual(subtest_name(mapping), "")
        with self.assertRaises(KeyError):
            subtest_name(mapping, 3)

    def test_dummy_process_group_has_rank_size_and_a_done_allreduce(self):
        pg = DummyProcessGroup(rank=1, size=4)
        self.assertEqual((pg.rank(), pg.size()), (1, 4))
        t = torch.ones(2)
        work = pg.allreduce([t])
        self.assertEqual(work.get_future().wait(), 1)
        self.assertEqual(t, torch.ones(2))  # nothing reduced

    def test_sharded_grad_scaler_on_a_dummy_group_finds_inf(self):
        # upstream's use: a ShardedGradScaler that all-reduces its "inf found" flags on it
        scaler = ShardedGradScaler(init_scale=2.0, process_group=DummyProcessGroup(0, 1),
                                   enabled=True, device="cpu")
        param = nn.Parameter(torch.ones(2))
        opt = torch.optim.SGD([param], lr=1.0)
        scaler.scale((param * torch.tensor([1.0, float("inf")])).sum()).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        self.assertEqual(param, torch.ones(2))  # the step was skipped
        self.assertEqual(scaler.get_scale(), 1.0)  # and the scale backed off

    def test_move_to_device_and_maybe_wrap_without_fsdp(self):
        layer = nn.Linear(2, 2)
        self.assertIs(_move_to_device(layer, False), layer)
        self.assertEqual(_move_to_device(layer, True).weight.device.type, DEVICE)
        self.assertIs(_maybe_wrap_fsdp(layer, False, device_id="ignored"), layer)

    def test_get_state_dict_moves_and_halves(self):
        model = nn.Linear(3, 2)
        sd = _get_state_dict(model, cpu_offload=False, half=True)
        self.assertEqual(sorted(sd), ["bias", "weight"])
        self.assertEqual(sd["weight"].dtype, torch.float16)
        self.assertEqual(sd["weight"].device.type, DEVICE)
        sd = _get_state_dict(nn.Linear(3, 2), cpu_offload=True)
        self.assertEqual((sd["weight"].dtype, sd["weight"].device.type), (torch.float32, "cpu"))

    def test_zero_model_without_summoning(self):
        model = nn.BatchNorm1d(3)
        model.running_mean.fill_(5.0)
        _zero_model(model, summon_full=False)
        self.assertEqual(model.weight, torch.zeros(3))
        self.assertEqual(model.running_mean, torch.full((3,), 5.0))
        _zero_model(model, zero_buffers=True, summon_full=False)
        self.assertEqual(model.running_mean, torch.zeros(3))

    def test_dummy_ddp_calls_its_module(self):
        inner = nn.Linear(2, 2)
        x = torch.randn(3, 2)
        wrapped = DummyDDP(inner)
        self.assertIs(wrapped.module, inner)
        self.assertEqual(wrapped(x), inner(x))


class TestFSDPHelpersOnRanks(FSDPTest):
    def test_assert_module_states_passes_alike_and_names_what_differs(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
        _assert_module_states(model, dist.group.WORLD, self.assertEqual)
        with torch.no_grad():
            model[1].running_var.fill_(float(self.rank))
        with self.assertRaisesRegex(AssertionError, r"'1\.running_var' differs between rank 0 and rank 1"):
            _assert_module_states(model, dist.group.WORLD, self.assertEqual)
        extra = nn.Linear(2, 2) if self.rank == 1 else nn.Identity()
        with self.assertRaisesRegex(AssertionError, "different module states"):
            _assert_module_states(nn.Sequential(nn.Linear(2, 2), extra), None, self.assertEqual)

    def test_broadcast_state_dict_gives_rank_0s(self):
        mine = {"w": torch.full((2,), float(self.rank))}
        got = _broadcast_state_dict(self.rank, mine if self.rank == 0 else None)
        self.assertEqual(got["w"], torch.zeros(2))
        self.assertEqual(got["w"].device.type, DEVICE)

    def test_zero_model_summons_full_params_and_maybe_wrap(self):
        torch.manual_seed(0)
        model = _maybe_wrap_fsdp(nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 3)), True)
        self.assertIsInstance(model, FullyShardedDataParallel)
        _zero_model(model)
        with FullyShardedDataParallel.summon_full_params(model):
            self.assertEqual([p.abs().sum().item() for p in model.parameters()], [0.0] * 4)
            self.assertEqual(sum(p.numel() for p in model.parameters()), 4 * 4 + 4 + 4 * 3 + 3)

    def test_non_uniform_req_grad_trains_only_the_last_layer(self):
        for mode in (FSDPInitMode.NO_FSDP, FSDPInitMode.RECURSIVE):
            model = NonUniformReqGradNWM.init(self.process_group, mode, DEVICEInitMode.DEVICE_BEFORE,
                                              fsdp_kwargs={"use_orig_params": True, **fsdp_kwargs()},
                                              deterministic=True)
            trainable = [n for n, p in model.named_parameters() if p.requires_grad]
            self.assertEqual(len(trainable), 2, trainable)
            self.assertTrue(all(re.match(r"module\.2.*\.1.*", n) for n in trainable), trainable)
            self.assertEqual(isinstance(model.module[2], FullyShardedDataParallel),
                             mode == FSDPInitMode.RECURSIVE)
            inp = model.get_input(torch.device(DEVICE))
            loss = model.get_loss(inp, model(*inp))
            model.run_backward(loss)
            frozen = [n for n, p in model.named_parameters() if not p.requires_grad and p.grad is not None]
            self.assertEqual(frozen, [])
            if mode == FSDPInitMode.NO_FSDP:  # (sharded, a rank may hold none of a parameter)
                self.assertEqual([n for n, p in model.named_parameters() if p.requires_grad and p.grad is None], [])

    def test_mixture_of_experts_experts_differ_shared_alike(self):
        model = MixtureOfExperts.init(self.process_group, FSDPInitMode.NO_FSDP,
                                      DEVICEInitMode.DEVICE_BEFORE, deterministic=True)
        expert, shared = model.module[2], model.module[1]
        self.assertTrue(all(getattr(p, "expert", False) for p in expert.parameters()))
        self.assertEqual(model.num_expert_params, 23 * 12 + 12)
        _assert_module_states(shared, None, self.assertEqual)
        with self.assertRaisesRegex(AssertionError, "'weight' differs"):
            _assert_module_states(expert, None, self.assertEqual)
        # Without FSDP, run_backward averages the shared gradients over the group itself.
        inp = model.get_input(torch.device(DEVICE))
        model.run_backward(model.get_loss(inp, model(*inp)))
        grads = [None] * self.world_size
        dist.all_gather_object(grads, [shared.weight.grad.cpu(), expert.weight.grad.cpu()])
        self.assertEqual(grads[0][0], grads[1][0])
        self.assertNotEqual(grads[0][1], grads[1][1])

    def test_mixture_of_experts_wrapped_with_a_delay_before_free(self):
        delays = []
        with mock.patch.object(fsdp1_variants, "delay", delays.append):
            model = MixtureOfExperts.init(self.process_group, FSDPInitMode.RECURSIVE,
                                          DEVICEInitMode.DEVICE_BEFORE, fsdp_kwargs=fsdp_kwargs(),
                                          deterministic=True, delay_before_free_ms=250)
            self.assertIsInstance(model.module[2], FullyShardedDataParallel)
            self.assertEqual(model.module[2].process_group.size(), 1)  # the expert: not sharded
            self.assertEqual(model.module[1].process_group.size(), self.world_size)
            inp = model.get_input(torch.device(DEVICE))
            model.run_backward(model.get_loss(inp, model(*inp)))
        self.assertEqual(delays, [250])

    def test_module_with_delay_delays_the_reduce_scatter_and_the_loss(self):
        delays = []
        with mock.patch.object(fsdp1_variants, "delay", delays.append):
            model = NestedWrappedModuleWithDelay.init(
                self.process_group, FSDPInitMode.RECURSIVE, fsdp_kwargs=fsdp_kwargs(),
                deterministic=True, delay_after_loss_ms=7, delay_before_reduction_ms=9)
            self.assertIsInstance(model, ModuleWithDelay)
            self.assertIsInstance(model.module, NestedWrappedModule)
            fsdp = FullyShardedDataParallel(model, **fsdp_kwargs())
            inp = model.get_input(torch.device(DEVICE))
            loss = model.get_loss(inp, fsdp(*inp))
            self.assertEqual(delays, [7])
            model.run_backward(loss)
        self.assertEqual(delays[0], 7)
        self.assertGreater(len(delays), 1)  # one per reduce-scatter of a gradient
        self.assertEqual(set(delays[1:]), {9})
        self.assertIsNot(dist.reduce_scatter_tensor, None)
        self.assertEqual(dist.reduce_scatter_tensor.__name__, "reduce_scatter_tensor")  # restored

    def test_skip_model_wraps_only_inside_enable_wrap(self):
        plain = SkipModel(double_nest=True)
        self.assertNotIsInstance(plain.nested_linear, FullyShardedDataParallel)
        with enable_wrap(wrapper_cls=FullyShardedDataParallel, **fsdp_kwargs()):
            single = SkipModel(double_nest=False)
            double = SkipModel(double_nest=True)
        for model in (single, double):
            self.assertIsInstance(model.nested_linear, FullyShardedDataParallel)
            self.assertIsInstance(model.linear, nn.Linear)
            self.assertIsInstance(model.linear_skip.lin, nn.Linear)
        self.assertNotIsInstance(single.nested_linear.module.nested_linear, FullyShardedDataParallel)
        self.assertIsInstance(double.nested_linear.module.nested_linear, FullyShardedDataParallel)
        x = torch.randn(2, 10, device=DEVICE)
        self.assertEqual(plain(x).shape, (2, 10))
        self.assertEqual(double(x).shape, (2, 10))


class TestFSDP1Parity(FSDPTest):
    def test_fsdp_matches_ddp_for_the_test_models(self):
        self._test_fsdp_parity(NestedWrappedModule, FSDPInitMode.RECURSIVE, DEVICEInitMode.DEVICE_BEFORE)
        self._test_fsdp_parity(NonUniformReqGradNWM, FSDPInitMode.RECURSIVE,
                               DEVICEInitMode.DEVICE_BEFORE, use_orig_params=True)
        self._test_fsdp_parity(NestedWrappedModule, FSDPInitMode.RECURSIVE,
                               DEVICEInitMode.DEVICE_BEFORE, enable_sharded_grad_scaler=True)
        self._test_fsdp_parity(MixtureOfExperts, FSDPInitMode.RECURSIVE, DEVICEInitMode.DEVICE_BEFORE,
                               ref_init_fn=DummyDDP)

    def test_a_reference_that_trains_differently_fails(self):
        class HalfSpeed(DummyDDP):  # its model's loss is halved: different steps
            def __init__(self, module):
                super().__init__(module)
                get_loss = module.get_loss
                module.get_loss = lambda inp, out: get_loss(inp, out) * 0.5
                ddp = nn.parallel.DistributedDataParallel(module)
                self.ddp = ddp

            def forward(self, *args):
                return self.ddp(*args)

        with self.assertRaisesRegex(AssertionError, "not close"):
            self._test_fsdp_parity(NestedWrappedModule, FSDPInitMode.RECURSIVE,
                                   DEVICEInitMode.DEVICE_BEFORE, ref_init_fn=HalfSpeed)

    def test_no_fsdp_is_refused(self):
        with self.assertRaisesRegex(ValueError, "needs an FSDP init mode"):
            self._test_fsdp_parity(NestedWrappedModule, FSDPInitMode.NO_FSDP, DEVICEInitMode.DEVICE_BEFORE)


class _Case(VerifyStateDictMixin, TestCase):
    def runTest(self):
        pass


class TestVerifyStateDictInOneProcess(TestCase):
    def test_matching_passes_and_a_mismatch_names_the_key(self):
        case = _Case()
        msd = {"a": torch.ones(2), "b": torch.zeros(3)}
        case._verify_msd(msd, {"a": torch.ones(2), "b": torch.zeros(3)})
        with self.assertRaisesRegex(AssertionError, "^b has mismatched value"):
            case._verify_msd(msd, {"a": torch.ones(2), "b": torch.ones(3)})
        with self.assertRaisesRegex(AssertionError, "keys differ"):
            case._verify_msd(msd, {"a": torch.ones(2)})

    def test_ignore_frozen_params_allows_only_frozen_keys_missing(self):
        case = _Case()
        frozen, trained = torch.ones(2), torch.ones(2, requires_grad=True)
        options = StateDictOptions(ignore_frozen_params=True)
        case._verify_msd({"f": frozen, "t": trained}, {"t": torch.ones(2)}, options)
        with self.assertRaisesRegex(AssertionError, "t is trainable but missing"):
            case._verify_msd({"f": frozen, "t": trained}, {"f": torch.ones(2)}, options)

    def test_optimizer_state_by_name(self):
        torch.manual_seed(0)
        case = _Case()
        model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
        optim = torch.optim.Adam(model.parameters(), lr=0.1)
        model(torch.randn(3, 2)).sum().backward()
        optim.step()
        dist_osd = get_optimizer_state_dict(model, optim)
        self.assertIn("0.weight", dist_osd["state"])  # keyed by name
        case._verify_osd(model, optim, optim.state_dict(), dist_osd)
        dist_osd = copy.deepcopy(dist_osd)  # its inner dicts are the optimizer's own
        dist_osd["state"]["1.bias"]["exp_avg"] = dist_osd["state"]["1.bias"]["exp_avg"] + 1
        with self.assertRaisesRegex(AssertionError, "optimizer state 'exp_avg' of 1.bias differs"):
            case._verify_osd(model, optim, optim.state_dict(), dist_osd)

    def test_needs_a_test_case(self):
        with self.assertRaises(TypeError):
            VerifyStateDictMixin()._verify_msd({}, {})


class TestVerifyStateDictOnRanks(VerifyStateDictMixin, FSDPTest):
    def test_fully_shard_state_dicts_match_the_plain_model(self):
        torch.manual_seed(0)
        model = MLP(8, device=DEVICE)
        sharded = MLP(8, device=DEVICE)
        sharded.load_state_dict(model.state_dict())
        fully_shard(sharded)
        optim = torch.optim.Adam(model.parameters(), lr=0.1)
        sharded_optim = torch.optim.Adam(sharded.parameters(), lr=0.1)
        inp = torch.randn(4, 8, device=DEVICE)  # alike on every rank (same seed)
        for m, o in ((model, optim), (sharded, sharded_optim)):
            m(inp).sum().backward()
            o.step()
        dist_msd = get_model_state_dict(sharded)
        self.assertIsInstance(dist_msd["in_proj.weight"], torch.distributed.tensor.DTensor)
        self._verify_msd(model.state_dict(), dist_msd)
        self._verify_osd(model, optim, optim.state_dict(), get_optimizer_state_dict(sharded, sharded_optim))
        new_optim = torch.optim.Adam(model.parameters(), lr=0.1)
        self._verify_osd_by_load(model, optim, new_optim,
                                 get_optimizer_state_dict(sharded, sharded_optim))
        wrong = dict(model.state_dict())
        wrong["out_proj.bias"] = wrong["out_proj.bias"] + 1
        with self.assertRaisesRegex(AssertionError, "^out_proj.bias has mismatched value"):
            self._verify_msd(wrong, dist_msd)


class TestStateDictModels(TestCase):
    def test_fusion_embedding_keys(self):
        self.assertEqual(sorted(FusionEmbedding(4, 3, 2).state_dict()),
                         ["embedding.weight", "fusion_embedding.weight"])
        hooked = FusionEmbeddingWithHook(4, 3, 2)
        self.assertEqual(sorted(hooked.state_dict()), ["fusion_embedding.weight", "weight"])
        fresh = FusionEmbeddingWithHook(4, 3, 2)
        fresh.load_state_dict(hooked.state_dict())
        self.assertEqual(fresh.embedding.weight, hooked.embedding.weight)

    def test_modifier_lets_dsd_name_the_renamed_key(self):
        model = nn.Sequential(FusionEmbeddingWithModifier(4, 3, 2))
        self.assertEqual(model[0]._fqn_modifiers(), {"weight": "embedding"})
        sd = get_model_state_dict(model)
        self.assertEqual(sorted(sd), ["0.fusion_embedding.weight", "0.weight"])
        self.assertEqual(sd["0.weight"], model[0].embedding.weight)


class TestFakeComms(TestCase):
    @with_fake_comms(rank=1, world_size=4)
    def test_a_fake_world_of_the_asked_size(self):
        self.assertEqual((dist.get_rank(), dist.get_world_size()), (1, 4))
        self.assertIsInstance(dist.group.WORLD, MockProcessGroup)
        self.assertEqual(dist.get_backend(), "mock_process_group")
        with self.assertRaises(RuntimeError):
            dist.all_reduce(torch.ones(1))

    @with_fake_comms
    def test_bare_decorator_is_rank_0_of_2(self):
        self.assertEqual((dist.get_rank(), dist.get_world_size()), (0, 2))

    def test_with_dist_destroys_its_group_also_after_an_error(self):
        self.assertFalse(dist.is_initialized())
        with self.assertRaises(ValueError):
            with with_dist(rank=2, world_size=3):
                self.assertEqual(dist.get_rank(), 2)
                raise ValueError("in the block")
        self.assertFalse(dist.is_initialized())

    def test_refused_inside_a_default_group_and_outside_the_world(self):
        with with_dist():
            with self.assertRaisesRegex(RuntimeError, "already exists"):
                mock_init_dist(0, 2)
        with self.assertRaisesRegex(ValueError, "rank 2 is not in a world of size 2"):
            mock_init_dist(2, 2)
        self.assertFalse(dist.is_initialized())

    def test_the_backend_is_registered_on_importing_the_face(self):
        self.assertIn("mock_process_group", dist.Backend.backend_list)
        dist.init_process_group("mock_process_group", store=dist.HashStore(), rank=0, world_size=3)
        try:
            self.assertEqual(dist.get_world_size(), 3)
        finally:
            dist.destroy_process_group()


class TestRpcUtils(TestCase):
    """``rpc_utils`` is the installed torch's own file on our harness: its lists hold torch's RPC
    suites (the files run in our faces), and ``generate_tests`` mixes them onto our test case."""

    def test_lists_hold_the_installed_torchs_suites_on_our_faces(self):
        self.assertEqual([c.__name__ for c in rpc_utils.FAULTY_AGENT_TESTS],
                         ["FaultyAgentRpcTest", "FaultyAgentDistAutogradTest", "JitFaultyAgentRpcTest"])
        self.assertEqual(len(rpc_utils.GENERIC_TESTS), 11)
        for suite in rpc_utils.GENERIC_TESTS + rpc_utils.TENSORPIPE_TESTS + rpc_utils.FAULTY_AGENT_TESTS:
            self.assertTrue(suite.__module__.startswith("torch_testing_ext.distributed."), suite)

    def test_the_faulty_fixture_asks_for_the_faulty_agent_torch_registers(self):
        from torch.distributed import rpc

        self.assertIs(FaultyRpcAgentTestFixture().rpc_backend, rpc.backend_registry.BackendType["FAULTY_TENSORPIPE"])

    def test_generated_classes_stand_on_our_test_case_with_the_fixture(self):
        classes = rpc_utils.generate_tests("TensorPipe", TensorPipeRpcAgentTestFixture,
                                           rpc_utils.GENERIC_TESTS + rpc_utils.TENSORPIPE_TESTS, __name__)
        self.assertEqual(len(classes), 13)
        cls = classes["TensorPipeRpcTest"]
        self.assertEqual((cls.__name__, cls.__module__), ("TensorPipeRpcTest", __name__))
        for base in (TensorPipeRpcAgentTestFixture, MultiProcessTestCase, rpc_utils.SpawnHelper):
            self.assertTrue(issubclass(cls, base), base)
        self.assertGreater(unittest.defaultTestLoader.loadTestsFromTestCase(cls).countTestCases(), 100)


class TestFaces(TestCase):
    def test_distributed_backend_is_the_devices(self):
        self.assertEqual(common_fsdp.DISTRIBUTED_BACKEND, devices.default_backend())
        if devices.accelerator_type() is None:
            self.assertEqual(common_fsdp.DISTRIBUTED_BACKEND, "gloo")

    def test_every_name_of_each_face_resolves(self):
        for face in (common_fsdp, common_state_dict, distributed_utils, rpc_utils):
            for name in face.__all__:
                self.assertTrue(hasattr(face, name), f"{face.__name__}.{name}")
        for name in ("SkipModel", "DummyProcessGroup", "_assert_module_states", "_maybe_wrap_fsdp",
                     "subtest_name", "MixtureOfExperts", "NonUniformReqGradNWM", "_zero_model"):
            self.assertIn(name, common_fsdp.__all__)
