"""Dynamo and Inductor together with DDP and FSDP.

Three classes:

- ``TestFakeDistributedSingleProc``: DDPOptimizer graph splitting in one process, with the
  harness's ``FakeDDP`` standing in for DDP (no process group at all).
- ``TestMultiProc``: real DDP/FSDP on ``world_size`` ranks (one per accelerator, or 2 CPU
  ranks with gloo), including compiler and guard collectives.
- ``TestSingleProc``: real DDP/FSDP on a world-size-1 process group.

Devices, backends, FSDP's ``device_id``, the BERT size and the CPU work-arounds come from
``torch_testing_ext``; nothing here names a device type.
"""

import contextlib
import copy
import functools
import logging
import random
import unittest
from datetime import timedelta
from io import StringIO
from unittest.mock import patch

import numpy as np
import torch
import torch._dynamo
import torch._dynamo.config as config
import torch._dynamo.utils
import torch._inductor.config
import torch.distributed as dist
from torch import nn
from torch._C import FileCheck
from torch._dynamo.backends.distributed import DDPOptimizer
from torch._dynamo.comptime import comptime
from torch._dynamo.testing import CompileCounter, CompileCounterWithBackend, collect_results
from torch._dynamo.utils import same
from torch._higher_order_ops.wrap import tag_activation_checkpoint
from torch.compiler import set_enable_guard_collectives
from torch.distributed._functional_collectives import _maybe_wrap_tensor
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    apply_activation_checkpointing,
    checkpoint_wrapper,
)
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import lambda_auto_wrap_policy, transformer_auto_wrap_policy
from torch.nn.attention.flex_attention import flex_attention
from torch.nn.parallel import DistributedDataParallel as DDP

from torch_testing_ext import devices
from torch_testing_ext.common_cuda import (
    PLATFORM_SUPPORTS_FLASH_ATTENTION,
    PLATFORM_SUPPORTS_MEM_EFF_ATTENTION,
)
from torch_testing_ext.common_distributed import (
    DynamoDistributedMultiProcTestCase,
    DynamoDistributedSingleProcTestCase,
    _dynamo_dist_per_rank_init,
    import_transformers_or_skip,
    requires_accelerator_dist_backend,
    skip_if_lt_x_gpu,
)
from torch_testing_ext.common_utils import run_tests, skipIfXpu
from torch_testing_ext.cpu_compat import fsdp_device_id
from torch_testing_ext.fake_ddp import FakeDDP, FakeDDPTestCase, active_ddp_module
from torch_testing_ext.hf_bert import hf_bert_config, hf_bert_size
from torch_testing_ext.inductor_utils import (
    GPU_INDUCTOR_SKIP_REASON,
    HAS_GPU,
    requires_inductor_backend,
)
from torch_testing_ext.triton_utils import requires_cuda_and_triton

log = logging.getLogger(__name__)

# The accelerator type, or "cpu" on a CPU-only machine.
device_type = devices.device_type()

# Text that ``test_fsdp_skip_guards`` collects from a comptime hook (module global on purpose:
# the hook runs at trace time and must find it without closing over test state).
GUARDS_FILE = StringIO()


# ---------------------------------------------------------------------------------------------
# Module-level helpers
# ---------------------------------------------------------------------------------------------


def reset_rng_state():
    """Put every random number generator the models use into the same known state."""
    torch.manual_seed(1337)
    random.seed(1337)
    np.random.seed(1337)


def init_weights(m):
    """Deterministic-scale init for ``nn.Linear`` layers; leaves every other module alone."""
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        m.bias.data.fill_(0.01)


@contextlib.contextmanager
def enable_guard_collectives():
    """Switch guard collectives on for the block (or decorated test), then restore them."""
    before = set_enable_guard_collectives(True)
    try:
        yield
    finally:
        set_enable_guard_collectives(before)


def _eight_layer_net(in_feat, hidden_feat, out_feat):
    """Linear/ReLU x 4: in -> hidden -> hidden -> hidden -> out (indices 0..7)."""
    return nn.Sequential(
        nn.Linear(in_feat, hidden_feat),
        nn.ReLU(),
        nn.Linear(hidden_feat, hidden_feat),
        nn.ReLU(),
        nn.Linear(hidden_feat, hidden_feat),
        nn.ReLU(),
        nn.Linear(hidden_feat, out_feat),
        nn.ReLU(),
    )


class ToyModel(nn.Module):
    def __init__(self, in_feat=10, hidden_feat=5000, out_feat=5, ctx_manager=None):
        super().__init__()
        self.ctx_manager = ctx_manager
        self.net = _eight_layer_net(in_feat, hidden_feat, out_feat)

    def forward(self, inputs):
        if self.ctx_manager is None:
            return self.net(inputs)
        with self.ctx_manager():
            return self.net(inputs)


def _build_and_run(model, device, bsz, in_feat):
    model = model.to(device)
    model.apply(init_weights)
    inputs = torch.rand(bsz, in_feat).to(device)
    return model, inputs, model(inputs)


def get_model(device, bsz=20, in_feat=10, hidden_feat=5000, out_feat=5, ctx_manager=None):
    """A ``ToyModel`` on ``device``, a random batch for it and its eager output."""
    model = ToyModel(in_feat=in_feat, hidden_feat=hidden_feat, out_feat=out_feat,
                     ctx_manager=ctx_manager)
    return _build_and_run(model, device, bsz, in_feat)


class MutatingModel(nn.Module):
    """Like ``ToyModel``, but ``forward`` first changes a plain Python attribute."""

    def __init__(self, in_feat=10, hidden_feat=5000, out_feat=5, ctx_manager=None):
        super().__init__()
        self.ctx_manager = ctx_manager
        self.net = _eight_layer_net(in_feat, hidden_feat, out_feat)
        self.state = 1

    def forward(self, inputs):
        self.state = 2
        return self.net(inputs) * self.state


def get_mutating_model(device, bsz=20, in_feat=10, hidden_feat=5000, out_feat=5,
                       ctx_manager=None):
    model = MutatingModel(in_feat=in_feat, hidden_feat=hidden_feat, out_feat=out_feat,
                          ctx_manager=ctx_manager)
    return _build_and_run(model, device, bsz, in_feat)


class ForcedGetAttrMod(nn.Module):
    """A module holding a ``Linear`` that is not registered as a submodule.

    ``forced_linear`` goes straight into the instance ``__dict__``, so neither
    ``parameters()`` nor FSDP knows about its weight; Dynamo must still read it.
    """

    def __init__(self, device):
        super().__init__()
        self.linear = nn.Linear(1, 1)
        self.__dict__["forced_linear"] = nn.Linear(1, 1).to(device=device)
        self.counter = 0

    def forward(self, x):
        self.counter += 1
        return x * self.linear(x) * self.forced_linear.weight


def get_forced_getattr_module(device):
    model = ForcedGetAttrMod(device).to(device=device)
    x = torch.randn(1, 1, device=device)
    return model, x, model(x)


class ToyInnerModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(100, 100), nn.Linear(100, 100))

    def forward(self, inputs):
        return self.layers(inputs)


class ToyOuterModel(nn.Module):
    def __init__(self, device):
        super().__init__()
        first = ToyInnerModel().to(device)
        second = ToyInnerModel().to(device)
        self.layers = nn.Sequential(first, nn.ReLU(), second, nn.ReLU())

    def forward(self, inputs):
        return self.layers(inputs)


def get_toy_model_for_activation_checkpointing(device):
    model = ToyOuterModel(device).to(device)
    model.apply(init_weights)
    inputs = torch.rand(100, 100).to(device)
    return model, inputs


def find_first_node(gm, func):
    """The first node of ``gm`` that calls ``func``, or None."""
    return next((node for node in gm.graph.nodes if node.target is func), None)


def apply_fsdp_with_checkpointing(model, wrap_policy, checkpoint_policy,
                                  use_activation_checkpointing=True):
    """FSDP (``use_orig_params``) around a copy of ``model``, optionally with non-reentrant
    activation checkpointing of the submodules ``checkpoint_policy`` selects."""
    wrapped = FSDP(copy.deepcopy(model), auto_wrap_policy=wrap_policy, use_orig_params=True,
                   device_id=fsdp_device_id())
    if use_activation_checkpointing:
        wrapper = functools.partial(checkpoint_wrapper,
                                    checkpoint_impl=CheckpointImpl.NO_REENTRANT)
        apply_activation_checkpointing(wrapped, checkpoint_wrapper_fn=wrapper,
                                       check_fn=checkpoint_policy)
    return wrapped


def get_custom_model(device):
    """A model with a hand-written layer between two ``Linear`` wrappers, fed one tensor twice."""

    class MyCustomLinear(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(512, 512))

        def forward(self, x):
            tmp = torch.mm(x, self.weight.t())
            # Scalar branches of ``where`` used to become real constant tensors that
            # DDPOptimizer's per-partition compilation did not fakeify.
            return tmp + torch.where(tmp < 0.5, 0.3, 0.6)

    class MyLinear(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(512, 512)

        def forward(self, x):
            return self.linear(x)

    class MyModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(MyLinear(), nn.ReLU(), MyCustomLinear(), nn.ReLU(),
                                     MyLinear(), nn.ReLU())

        def forward(self, x, y):
            # The parameter-free add comes before any layer: with the nearest bucket full,
            # DDPOptimizer would start a bucket holding only this op and must fold it back.
            return self.seq(x + y)

    model = MyModule().to(device)
    model.apply(init_weights)
    t = torch.rand(512, 512).to(device)
    inputs = (t, t)  # the same tensor twice: duplicated graph inputs
    return model, inputs, model(*inputs)


def get_hf_bert(rank):
    """A Hugging Face BERT for masked LM, built from a config, and a batch with labels.

    The size is the harness's choice (``torch_testing_ext.hf_bert``): upstream's
    ``BertConfig()`` with 4 x 512 tokens on accelerators, a smaller BERT on a CPU-only machine.
    """
    try:
        from transformers import AutoModelForMaskedLM, BertConfig  # noqa: F401
    except ImportError as error:
        raise unittest.SkipTest("Unable to import transformers") from error
    device = devices.rank_device(rank)
    size = hf_bert_size()
    config = hf_bert_config()
    model = AutoModelForMaskedLM.from_config(config).to(device)
    shape = (size.batch_size, size.seq_len)
    input_ids = torch.randint(0, config.vocab_size, shape).to(device)
    labels = torch.randint(0, config.vocab_size, shape).to(device)
    model.train()
    return model, {"input_ids": input_ids, "labels": labels}


def _sum_after_reading_shapes(x, y):
    """``x.sum() + y.sum()`` after reading both shapes, which ranks' speculation must agree on."""
    x.shape  # noqa: B018
    y.shape  # noqa: B018
    return x.sum() + y.sum()


class CheckSplitsCompiler:
    """A backend that counts the graphs it is given (one per DDPOptimizer partition)."""

    def __init__(self):
        self.compiler_called = 0

    def compile_fn(self, gm, example_inputs):
        self.compiler_called += 1
        return gm


def _compiled_call(module, backend):
    """A function that calls ``module``, compiled with ``backend`` (``module`` bound now, not
    looked up in a loop's variable when the function runs)."""

    @torch.compile(backend=backend)
    def opt_fn(inputs):
        return module(inputs)

    return opt_fn


def _check_train_step_parity(test, make_eager_model, make_compiled_model, inputs):
    """One BERT training step eagerly and one compiled must give the same results.

    Each model is made right after ``reset_rng_state()``; results are collected after both
    backward passes (HF-BERT parity check).
    """
    reset_rng_state()
    eager_model = make_eager_model()
    correct_outputs = eager_model(**inputs)
    correct_loss = correct_outputs.loss
    correct_loss.backward()

    reset_rng_state()
    opt_model = make_compiled_model()
    opt_outputs = opt_model(**inputs)
    opt_loss = opt_outputs.loss
    opt_loss.backward()

    inputs_flat = list(inputs.values())
    correct_results = collect_results(eager_model, correct_outputs.logits, correct_loss,
                                      inputs_flat)
    opt_results = collect_results(opt_model, opt_outputs.logits, opt_loss, inputs_flat)
    test.assertTrue(same(correct_results, opt_results))


def run_hf_bert_ddp(self, model, inputs, backend):
    """Train one step eagerly and one step compiled with ``backend``; results must agree."""
    _check_train_step_parity(self, lambda: model,
                             lambda: torch.compile(model, backend=backend), inputs)


# ---------------------------------------------------------------------------------------------
# DDPOptimizer with FakeDDP, one process, no process group
# ---------------------------------------------------------------------------------------------


class TestFakeDistributedSingleProc(FakeDDPTestCase):
    """Every test runs with ``optimize_ddp=True`` (DDPOptimizer on), set by the base class."""

    @requires_inductor_backend
    @unittest.skipIf(torch._inductor.config.triton.native_matmul,
             "FIXME : native matmul fails. RuntimeError: Cannot access data pointer of Tensor")
    @patch.object(torch._inductor.config, "fallback_random", True)
    def test_hf_bert_ddp_inductor(self):
        model, inputs = get_hf_bert(0)
        model = FakeDDP(model)
        run_hf_bert_ddp(self, model, inputs, "inductor")

    def test_hf_bert_ddp_aot_eager(self):
        model, inputs = get_hf_bert(0)
        model = FakeDDP(model)
        run_hf_bert_ddp(self, model, inputs, "aot_eager")

    def test_issue90375(self):
        class Model(nn.Module):
            def forward(self):
                return torch.randn(3) * torch.randn(3)

        model = FakeDDP(Model())
        opt_model = torch.compile(model, backend="aot_eager")
        opt_model()

    def test_symbol_splitting(self):
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight1 = nn.Parameter(torch.randn(512, 512))
                self.weight2 = nn.Parameter(torch.randn(512, 512))

            def forward(self, x):
                x = torch.cat([x, x])
                y = x @ self.weight1
                return x + y @ self.weight2

        model = FakeDDP(Model())
        opt_model = torch.compile(dynamic=True)(model)
        opt_model(torch.randn(20, 512))

    def test_ddp_optimizer_inductor_strides_dont_specialize(self):
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc_0 = nn.Linear(768, 768)
                self.fc_1 = nn.Linear(768, 768)

            def forward(self, x):
                return self.fc_1(self.fc_0(x))

        model = FakeDDP(Model())
        inp = torch.randn((16, 18, 768))
        inp2 = torch.randn((16, 20, 768))
        torch._dynamo.mark_dynamic(inp, 1)
        torch._dynamo.mark_dynamic(inp2, 1)

        torch._dynamo.utils.clear_compilation_metrics()
        torch._dynamo.reset()
        # Registered by hand for the whole block (as DDP does), not only inside FakeDDP.forward.
        with active_ddp_module(model):
            opt_model = torch.compile(model)
            self.assertEqual(0, len(torch._dynamo.utils.get_compilation_metrics()))
            opt_model(inp)
            compile_count_before = len(torch._dynamo.utils.get_compilation_metrics())
            opt_model(inp2)
            compile_count_after = len(torch._dynamo.utils.get_compilation_metrics())
            # A second sequence length must not recompile because of specialised strides.
            self.assertEqual(compile_count_before, compile_count_after)

    @config.patch(capture_scalar_outputs=True)
    def test_unbacked_symbol_splitting_direct(self):
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight1 = nn.Parameter(torch.randn(512, 512))
                self.weight2 = nn.Parameter(torch.randn(512, 512))

            def forward(self, x, y):
                u0, _ = y.tolist()
                x = torch.cat([x, x])
                y = x @ self.weight1
                return (x + y @ self.weight2) * u0

        model = FakeDDP(Model())
        opt_model = torch.compile(dynamic=True)(model)
        opt_model(torch.randn(20, 512), torch.tensor([12, 13]))

    @config.patch(capture_scalar_outputs=True)
    def test_unbacked_symbol_splitting_indirect(self):
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight1 = nn.Parameter(torch.randn(512, 512))
                self.weight2 = nn.Parameter(torch.randn(512, 512))

            def forward(self, x, y):
                u0, _ = y.tolist()
                a = torch.ones(u0)
                x = torch.cat([x, x])
                y = x @ self.weight1
                return (x + y @ self.weight2) * a.sum()

        model = FakeDDP(Model())
        opt_model = torch.compile(dynamic=True)(model)
        opt_model(torch.randn(20, 512), torch.tensor([12, 13]))

    @config.patch(capture_scalar_outputs=True)
    def test_unbacked_symbol_splitting_torture_multi(self):
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight1 = nn.Parameter(torch.randn(512, 512))
                self.weight2 = nn.Parameter(torch.randn(512, 512))
                self.weight3 = nn.Parameter(torch.randn(512, 512))

            def forward(self, x, y):
                # With 1 MB buckets each weight is its own partition: u0 is defined in the
                # first, ``a`` (sized by u0) is created in the second, used in the third.
                u0, _ = y.tolist()
                x = torch.cat([x, x])
                y1 = x @ self.weight1
                y2 = y1 @ self.weight2
                a = torch.ones(u0)
                return (x + y2 @ self.weight3) * a.sum()

        model = FakeDDP(Model(), bucket_cap_mb=1)
        opt_model = torch.compile(dynamic=True)(model)
        opt_model(torch.randn(20, 512), torch.tensor([12, 13]))

    @config.patch(capture_dynamic_output_shape_ops=True)
    def test_unbacked_symbol_splitting_no_binding(self):
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight1 = nn.Parameter(torch.randn(512, 512))
                self.weight2 = nn.Parameter(torch.randn(512, 512))

            def forward(self, x, y):
                nz = y.nonzero()
                x = torch.cat([x, x])
                y = x @ self.weight1
                return (x + y @ self.weight2) * (nz + 1).sum()

        model = FakeDDP(Model())
        opt_model = torch.compile(dynamic=True)(model)
        opt_model(torch.randn(20, 512), torch.tensor([0.0, 12.0, 0.0, 11.0]))

    def test_call_method_forward(self):
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([
                    nn.ModuleList([
                        nn.LayerNorm(96),
                        nn.MultiheadAttention(embed_dim=96, num_heads=4, batch_first=True),
                    ])
                    for _ in range(2)
                ])

            def forward(self, x):
                batch, frames, time, hidden = x.shape
                for norm, attention in self.layers:
                    x = x.reshape(batch * frames, time, hidden)
                    x = norm(x)
                    # ``.forward`` on purpose: DDPOptimizer must cope with explicit calls.
                    x = attention.forward(x, x, x)[0]
                    x = x.reshape(batch, frames, time, hidden)
                return x

        model = FakeDDP(Model())
        opt_model = torch.compile(model)
        opt_model(torch.randn(2, 129, 100, 96))


# ---------------------------------------------------------------------------------------------
# Real DDP/FSDP on several ranks
# ---------------------------------------------------------------------------------------------


@requires_accelerator_dist_backend(["nccl", "xccl"], allow_cpu=True)
class TestMultiProc(DynamoDistributedMultiProcTestCase):
    device_type = device_type

    def assert_same_compile_count_on_all_ranks(self):
        """Every rank compiled as often as rank 0 (the point of compiler/guard collectives)."""
        count = len(torch._dynamo.utils.get_compilation_metrics())
        counts = [None] * self.world_size
        dist.all_gather_object(counts, count)
        for other in counts[1:]:
            self.assertEqual(counts[0], other)

    @contextlib.contextmanager
    def _same_compile_count_on_all_ranks(self):
        """The per-rank init around a block that must compile as often on every rank (RCC):
        compilation metrics are cleared on entry and the counts compared at the end."""
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            torch._dynamo.utils.clear_compilation_metrics()
            yield
            self.assert_same_compile_count_on_all_ranks()

    @skip_if_lt_x_gpu(2, allow_cpu=True)
    @config.patch(optimize_ddp=False, enable_compiler_collectives=True)
    def test_ddp_baseline_aot_eager_multiprocess(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            self.assertFalse(config.optimize_ddp)
            m, inputs, correct_outputs = get_model(self.device)
            m = DDP(m, device_ids=self.device_ids)
            m = torch.compile(m, backend="aot_eager")
            outputs = m(inputs)
            self.assertTrue(same(correct_outputs, outputs))

    def _test_hf_bert_ddp(self, backend, static_graph):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            model, inputs = get_hf_bert(self.rank)
            model = DDP(model, static_graph=static_graph)
            run_hf_bert_ddp(self, model, inputs, backend)

    @skip_if_lt_x_gpu(2, allow_cpu=True)
    @import_transformers_or_skip()
    @requires_inductor_backend
    @config.patch(optimize_ddp=True, enable_compiler_collectives=True)
    @patch.object(torch._inductor.config, "fallback_random", True)
    def test_hf_bert_ddp_inductor(self):
        self._test_hf_bert_ddp("inductor", static_graph=False)

    @skip_if_lt_x_gpu(2, allow_cpu=True)
    @import_transformers_or_skip()
    @requires_inductor_backend
    @config.patch(optimize_ddp=True, enable_compiler_collectives=True)
    @patch.object(torch._inductor.config, "fallback_random", True)
    def test_hf_bert_ddp_inductor_static_graph(self):
        self._test_hf_bert_ddp("inductor", static_graph=True)

    @skip_if_lt_x_gpu(2, allow_cpu=True)
    @import_transformers_or_skip()
    @config.patch(optimize_ddp=True, enable_compiler_collectives=True)
    def test_hf_bert_ddp_aot_eager(self):
        self._test_hf_bert_ddp("aot_eager", static_graph=False)

    @skip_if_lt_x_gpu(2, allow_cpu=True)
    @import_transformers_or_skip()
    @config.patch(optimize_ddp=True, enable_compiler_collectives=True)
    def test_hf_bert_ddp_aot_eager_static_graph(self):
        self._test_hf_bert_ddp("aot_eager", static_graph=True)

    @skip_if_lt_x_gpu(2, allow_cpu=True)
    @requires_inductor_backend
    @config.patch(optimize_ddp=False, enable_compiler_collectives=True)
    def test_ddp_activation_checkpointing(self):
        class MyModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(64, 32)
                self.fc2 = nn.Linear(32, 16)
                self.fc3 = nn.Linear(16, 8)

            def forward(self, inp):
                return self.fc3(self.fc2(self.fc1(inp)))

        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            self.assertFalse(config.optimize_ddp)
            model = MyModel().to(device=self.device_type)
            wrapper = functools.partial(checkpoint_wrapper,
                                        checkpoint_impl=CheckpointImpl.NO_REENTRANT)
            apply_activation_checkpointing(model, checkpoint_wrapper_fn=wrapper,
                                           check_fn=lambda m: isinstance(m, nn.Linear))
            model = DDP(model)
            x = torch.randn(10, 64).to(self.device_type)
            correct_outputs = model(x)
            opt_model = torch.compile(model)
            outputs = opt_model(x)
            self.assertTrue(same(correct_outputs, outputs))

    def _fsdp_two_ways(self, backend):
        """FSDP around the whole toy model, then nested FSDP units around every Linear."""
        m, inputs, correct_outputs = get_model(self.device)
        fsdp_m = FSDP(m, use_orig_params=True, device_id=fsdp_device_id())
        fsdp_m = torch.compile(fsdp_m, backend=backend)
        outputs = fsdp_m(inputs)
        self.assertTrue(same(correct_outputs, outputs))

        m, inputs, correct_outputs = get_model(self.device)
        policy = functools.partial(transformer_auto_wrap_policy,
                                   transformer_layer_cls=(nn.Linear,))
        fsdp_m = FSDP(m, auto_wrap_policy=policy, use_orig_params=True,
                      device_id=fsdp_device_id())
        fsdp_m = torch.compile(fsdp_m, backend=backend)
        outputs = fsdp_m(inputs)
        self.assertTrue(same(correct_outputs, outputs))

    @skip_if_lt_x_gpu(1, allow_cpu=True)
    @config.patch(enable_compiler_collectives=True)
    def test_fsdp_aot_eager(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            self._fsdp_two_ways("aot_eager")

    @skip_if_lt_x_gpu(2)
    @unittest.skipIf(not HAS_GPU, GPU_INDUCTOR_SKIP_REASON)
    @requires_cuda_and_triton
    def test_ddp_optimizer_cudagraph(self):
        class Net(nn.Module):
            def __init__(self):
                # Wide enough that DDPOptimizer splits the graph (2 forward + 2 backward).
                super().__init__()
                channels = 640
                self.convi = nn.Conv2d(46, channels, 3, padding=1, bias=False)
                self.bni = nn.BatchNorm2d(channels)
                self.convp = nn.Conv2d(channels, channels, 1, padding=0, bias=False)

            def forward(self, x):
                return self.convp(self.bni(self.convi(x)))

        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            net = Net().to(self.device)
            optimizer = torch.optim.SGD(net.parameters(), lr=5e-2)
            net = DDP(net, device_ids=self.device_ids)
            net = torch.compile(net, mode="reduce-overhead")
            net.train()
            for _ in range(10):
                optimizer.zero_grad()
                x = torch.randn(16, 46, 8, 8, dtype=torch.float32, device=self.device)
                net(x).sum().backward()

            from torch._inductor.cudagraph_trees import get_container

            self.assertEqual(get_container(self.rank).tree_manager.new_graph_id().id, 4)

    @skip_if_lt_x_gpu(1, allow_cpu=True)
    @config.patch(enable_compiler_collectives=True)
    def test_fsdp_setattr(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            from torch._dynamo.utils import counters

            counters.clear()
            m, inputs, correct_outputs = get_mutating_model(self.device)
            fsdp_m = FSDP(m, use_orig_params=True, device_id=fsdp_device_id())
            fsdp_m = torch.compile(fsdp_m, backend="eager", fullgraph=False)
            outputs = fsdp_m(inputs)
            self.assertTrue(same(correct_outputs, outputs))
            self.assertEqual(len(counters["graph_break"]), 1)
            first_reason = next(iter(counters["graph_break"].keys()))
            if devices.accelerator_type() is None:
                # On a CPU-only machine the one break happens earlier: FSDP's lazy init asks
                # the CPU device handle ``is_available()``, which Dynamo cannot fold.
                self.assertIn("torch.* op returned non-Tensor", first_reason)
                self.assertIn("is_available", first_reason)
            else:
                self.assertIn("setattr() on Tensor.requires_grad", first_reason)

    @skip_if_lt_x_gpu(1, allow_cpu=True)
    @config.patch(inline_inbuilt_nn_modules=False, enable_compiler_collectives=True)
    def test_fsdp_unspecialized_forced_getattr_no_inline(self):
        self._test_fsdp_unspecialized_forced_getattr()

    @skip_if_lt_x_gpu(1, allow_cpu=True)
    @config.patch(enable_compiler_collectives=True)
    def test_fsdp_unspecialized_forced_getattr_inline(self):
        self._test_fsdp_unspecialized_forced_getattr()

    def _test_fsdp_unspecialized_forced_getattr(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            from torch._dynamo.utils import counters

            counters.clear()
            m, inputs, correct_outputs = get_forced_getattr_module(self.device)
            fsdp_m = FSDP(m, use_orig_params=True, device_id=fsdp_device_id())
            fsdp_m = torch.compile(fsdp_m, backend="eager", fullgraph=False)
            outputs = fsdp_m(inputs)
            self.assertTrue(same(correct_outputs, outputs))

    @skip_if_lt_x_gpu(1, allow_cpu=True)
    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_fsdp_inductor(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            self._fsdp_two_ways("inductor")

    @skip_if_lt_x_gpu(1, allow_cpu=True)
    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_fsdp_activation_checkpointing(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            model, inputs = get_toy_model_for_activation_checkpointing(self.device)

            def is_inner(module):
                return isinstance(module, ToyInnerModel)

            wrap_policy = functools.partial(lambda_auto_wrap_policy, lambda_fn=is_inner)
            model = apply_fsdp_with_checkpointing(model, wrap_policy, is_inner)
            correct_outputs = model(inputs)
            cnt = CompileCounterWithBackend("inductor")
            opt_model = torch.compile(model, backend=cnt)
            outputs = opt_model(inputs)
            self.assertTrue(same(correct_outputs, outputs))
            # One graph per FSDP unit (each inner model), not one for the whole model.
            self.assertEqual(cnt.frame_count, 2)
            self.assertIsNotNone(find_first_node(cnt.graphs[0], tag_activation_checkpoint))

    def _run_hf_bert_fsdp(self, make_fsdp_model, label, banner):
        """Eager FSDP BERT vs. an Inductor-compiled copy: one training step must agree."""
        print(f"Running {banner} test for {label}")
        model, inputs = get_hf_bert(self.rank)
        _check_train_step_parity(
            self, lambda: make_fsdp_model(model),
            lambda: torch.compile(make_fsdp_model(model), backend="inductor"), inputs)

    @import_transformers_or_skip()
    @requires_inductor_backend
    @unittest.skipIf(PLATFORM_SUPPORTS_FLASH_ATTENTION or PLATFORM_SUPPORTS_MEM_EFF_ATTENTION,
             "Inaccurate results with fused SDPA kernels")
    @patch.object(torch._inductor.config.triton, "cudagraphs", False)
    @patch.object(torch._inductor.config, "fallback_random", True)
    @config.patch(enable_compiler_collectives=True)
    def test_hf_bert_fsdp(self):
        def apply_fsdp(model, wrap_policy):
            return FSDP(copy.deepcopy(model), auto_wrap_policy=wrap_policy,
                        use_orig_params=True, device_id=fsdp_device_id())

        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            self._run_hf_bert_fsdp(functools.partial(apply_fsdp, wrap_policy=None),
                                   "FSDP without recursive wrapping", "hf_bert")

    @import_transformers_or_skip()
    @requires_inductor_backend
    @patch.object(torch._inductor.config.triton, "cudagraphs", False)
    @patch.object(torch._inductor.config, "fallback_random", True)
    @config.patch(guard_nn_modules=True, enable_compiler_collectives=True)
    def test_hf_bert_fsdp_activation_checkpointing(self):
        from transformers.models.bert.modeling_bert import BertLayer

        def is_bert_layer(module):
            return isinstance(module, BertLayer)

        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            wrap_policy = functools.partial(transformer_auto_wrap_policy,
                                            transformer_layer_cls=(BertLayer,))
            make_model = functools.partial(apply_fsdp_with_checkpointing,
                                           wrap_policy=wrap_policy,
                                           checkpoint_policy=is_bert_layer)
            self._run_hf_bert_fsdp(make_model, "FSDP with recursive wrapping BertLayer instances",
                                   "hf_bert_activation_checkpointing")

    # -- compiler collectives: ranks that see different inputs still decide alike ------------

    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_compiler_collectives_automatic_dynamic_tensor(self):
        with self._same_compile_count_on_all_ranks():
            class SimpleModel(nn.Module):
                def __init__(self, input_size, output_size):
                    super().__init__()
                    self.linear = nn.Linear(input_size, output_size)

                def forward(self, x):
                    return self.linear(x)

            model = SimpleModel(10, 2).to(self.device)
            model.forward = torch.compile(model.forward)
            ddp_model = DDP(model, device_ids=self.device_ids)
            loss_fn = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.001)

            def batch(size):
                return torch.randn(size, 10), torch.randint(0, 2, (size,))

            sizes = (5, 8, 6) if self.rank == 0 else (6, 6, 3)
            for inputs, labels in (batch(s) for s in sizes):
                inputs, labels = inputs.to(self.device), labels.to(self.device)
                optimizer.zero_grad()
                loss = loss_fn(ddp_model(inputs), labels)
                loss.backward()
                optimizer.step()

    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_compiler_collectives_automatic_dynamic_scalar(self):
        with self._same_compile_count_on_all_ranks():
            device = self.device

            @torch.compile()
            def f(x, y):
                return x + torch.ones(y, device=device).sum()

            values = (3, 3, 7) if self.rank == 0 else (3, 4, 9)
            for y in values:
                f(torch.randn(5, device=self.device), y)

    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_compiler_collectives_automatic_dynamic_speculation_divergence(self):
        with self._same_compile_count_on_all_ranks():
            f = torch.compile(_sum_after_reading_shapes)
            sizes = (4, 4) if self.rank == 0 else (3, 4)
            for n in sizes:
                f(torch.randn(n, device=self.device), torch.randn(n, device=self.device))

    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_compiler_collectives_graph_break_empty_graph_still_collective(self):
        with self._same_compile_count_on_all_ranks():
            @torch.compile()
            def f(x, y):
                z = y  # noqa: F841  (dead alias: the graph before the break stays empty)
                print("woof")
                x.shape  # noqa: B018
                y.shape  # noqa: B018
                return x.sum() + y.sum()

            sizes = (5, 5, 6) if self.rank == 0 else (3, 4, 5)
            for n in sizes:
                f(torch.randn(n, device=self.device), torch.randn(n, device=self.device))

    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_compiler_collectives_dim_mismatch(self):
        with self._same_compile_count_on_all_ranks():
            f = torch.compile(_sum_after_reading_shapes)
            shape = [4, 2] if self.rank == 0 else [3]
            f(torch.randn(shape, device=self.device), torch.randn(shape, device=self.device))

    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_compiler_collectives_missing_source(self):
        with self._same_compile_count_on_all_ranks():
            @torch.compile()
            def f(rank, xs):
                return xs[rank].sum()

            xs = [torch.randn(10, device=self.device) for _ in range(self.world_size)]
            f(self.rank, xs)

    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_compiler_collectives_scalar_missing_source(self):
        with self._same_compile_count_on_all_ranks():
            device = self.device

            @torch.compile()
            def f(rank, xs):
                return torch.tensor(xs[rank], device=device)

            xs = [10 + i for i in range(self.world_size)]
            f(self.rank, xs)

    @requires_inductor_backend
    @config.patch(enable_compiler_collectives=True)
    def test_compiler_collectives_type_mismatch(self):
        with self._same_compile_count_on_all_ranks():
            device = self.device

            @torch.compile()
            def f(x):
                if isinstance(x, int):
                    return torch.tensor(x, device=device)
                return x.sum()

            x = torch.randn(10, device=self.device) if self.rank == 0 else 12
            f(x)
            # Calling again with the types swapped between ranks is known to deadlock, so the
            # test stops after one call.

    @requires_inductor_backend
    @enable_guard_collectives()
    def test_guard_collective(self):
        with self._same_compile_count_on_all_ranks():
            @torch.compile()
            def f(x):
                return x.sum()

            f(torch.randn(10, device=self.device))
            # Only the non-zero ranks see a new shape; with guard collectives every rank
            # recompiles together.
            n = 10 if self.rank == 0 else 12
            f(torch.randn(n, device=self.device))

    # -- distributed autotuning --------------------------------------------------------------

    @staticmethod
    def _autotune_inputs(device, m, k):
        """bfloat16 ``a`` (m, m), ``b`` (m, k), ``c`` (k, m) on ``device``."""
        a = torch.randn(m, m, device=device, dtype=torch.bfloat16)
        b = torch.randn(m, k, device=device, dtype=torch.bfloat16)
        c = torch.randn(k, m, device=device, dtype=torch.bfloat16)
        return a, b, c

    @staticmethod
    def _autotuned_fn():
        @torch.compile()
        def f(a, b, c):
            return (torch.sum(a @ b + 1.0) + torch.sum(torch.relu(b @ c))
                    + torch.sum(c @ a))

        return f

    @requires_inductor_backend
    @unittest.skipIf(torch._inductor.config.triton.native_matmul,
             "FIXME : native matmul fails. RuntimeError: Cannot access data pointer of Tensor")
    @config.patch(enable_compiler_collectives=True)
    @patch.object(torch._inductor.config, "max_autotune_gemm", True)
    @patch.object(torch._inductor.config, "distributed_max_autotune_gemm", True)
    def test_multiproc_autotune(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            torch._dynamo.utils.clear_compilation_metrics()
            f = self._autotuned_fn()
            a, b, c = self._autotune_inputs(self.device, 1024, 2048)
            try:
                f(a, b, c)
            except Exception:
                log.exception("Caught exception running f")
                raise

            self.assert_same_compile_count_on_all_ranks()
            print(f"Result from {self.rank} is {f(a, b, c)}")

    @requires_inductor_backend
    @unittest.skipIf(torch._inductor.config.triton.native_matmul,
             "FIXME : native matmul fails. RuntimeError: Cannot access data pointer of Tensor")
    @config.patch(enable_compiler_collectives=True)
    @patch.object(torch._inductor.config, "max_autotune_gemm", True)
    @patch.object(torch._inductor.config, "distributed_max_autotune_gemm", True)
    def test_multiproc_autotune_dynamic_shapes(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            torch._dynamo.utils.clear_compilation_metrics()
            f = self._autotuned_fn()
            a, b, c = self._autotune_inputs(self.device, 1024, 2048)
            for t in (a, b, c):
                torch._dynamo.mark_dynamic(t, 0)
                torch._dynamo.mark_dynamic(t, 1)
            try:
                f(a, b, c)
            except Exception:
                log.exception("Caught exception running f")
                raise

            self.assert_same_compile_count_on_all_ranks()
            print(f"Result from {self.rank} is {f(a, b, c)}")

            initial = len(torch._dynamo.utils.get_compilation_metrics())
            a2, b2, c2 = self._autotune_inputs(self.device, 512, 2048)
            try:
                print(f"Result2 from {self.rank} is {f(a2, b2, c2)}")
            except Exception:
                log.exception("Caught exception running f with different sizes")
                raise
            self.assertEqual(initial, len(torch._dynamo.utils.get_compilation_metrics()),
                             "Expected no recompilation with dynamic shapes")
            self.assert_same_compile_count_on_all_ranks()

    @requires_inductor_backend
    def test_get_pg_attr(self):
        with _dynamo_dist_per_rank_init(self.rank, self.world_size):
            pg = dist.distributed_c10d._get_default_group()

            @torch.compile(fullgraph=True)
            def f(x):
                if dist.distributed_c10d._rank_not_in_group(pg):
                    return x + 1
                return x - 1

            x = torch.ones(4, device=self.device)
            self.assertEqual(f(x), x - 1)

            # ``f`` reads ``pg`` from this scope: rebinding it must fail the guard.
            pg = dist.distributed_c10d.GroupMember.NON_GROUP_MEMBER
            self.assertEqual(f(x), x + 1)

    @skipIfXpu
    @unittest.skipIf(not HAS_GPU, GPU_INDUCTOR_SKIP_REASON + " (and the NCCL-only ephemeral timeout"
             " extension this test relies on)")
    @patch.object(torch._inductor.config, "fx_graph_cache", False)
    @patch.object(torch._inductor.config, "fx_graph_remote_cache", False)
    def test_asymmetric_compilation(self):
        with self._same_compile_count_on_all_ranks():
            cnt = CompileCounter()
            sleep_time = 5
            rank = self.rank

            @torch.compile(backend=cnt)
            def f(x):
                if rank == 0:
                    comptime.sleep(sleep_time)  # only rank 0 is slow, and only at compile time
                return (2 * x).sum()

            pg = dist.distributed_c10d._get_default_group()
            backend = pg._get_backend(torch.device(self.device))
            backend._set_default_timeout(timedelta(seconds=sleep_time - 2))

            x = torch.ones(4, device=self.device)
            pg.allreduce(x).wait()  # NCCL connects lazily: do it before the timing matters
            f(x)
            if self.rank != 0:
                # Without this the waiting ranks hit the 3 s timeout while rank 0 compiles.
                dist.distributed_c10d._add_ephemeral_timeout_for_all_pgs(
                    timedelta(seconds=sleep_time))
            pg.allreduce(x).wait()
            torch.accelerator.synchronize(self.device)

    @skipIfXpu
    @unittest.skipIf(not HAS_GPU, GPU_INDUCTOR_SKIP_REASON + " (and Inductor's NCCL timeout"
             " extension on FX-cache hits this test relies on)")
    @patch.object(torch._inductor.config, "fx_graph_cache", True)
    @patch.object(torch._inductor.config, "fx_graph_remote_cache", False)
    @patch.object(torch._inductor.config, "sleep_sec_TESTING_ONLY", 10)
    def test_asymmetric_compilation_with_fx_cache(self):
        from torch._inductor.utils import fresh_cache

        with fresh_cache(), _dynamo_dist_per_rank_init(self.rank, self.world_size):
            torch._dynamo.utils.clear_compilation_metrics()
            counters = torch._dynamo.utils.counters

            def assert_fx_cache(miss, hit):
                self.assertEqual(counters["inductor"]["fxgraph_cache_miss"], miss)
                self.assertEqual(counters["inductor"]["fxgraph_cache_hit"], hit)
                self.assertEqual(counters["inductor"]["fxgraph_cache_bypass"], 0)

            @torch.compile
            def f(x):
                return (2 * x).sum()

            pg = dist.distributed_c10d._get_default_group()
            pg._get_backend(torch.device(self.device))._set_default_timeout(timedelta(seconds=5))
            counters.clear()

            x = torch.ones(4, device=self.device)
            f(x)
            assert_fx_cache(miss=1, hit=0)

            pg.allreduce(x).wait()
            torch.accelerator.synchronize(self.device)
            torch._dynamo.reset()

            if self.rank == 0:
                with fresh_cache():
                    f(x)
                assert_fx_cache(miss=2, hit=0)
            else:
                f(x)
                assert_fx_cache(miss=1, hit=1)

            pg.allreduce(x).wait()
            torch.accelerator.synchronize(self.device)


# ---------------------------------------------------------------------------------------------
# Real DDP/FSDP on a world-size-1 process group
# ---------------------------------------------------------------------------------------------


def _alibi_flex_attention_model(attention, S, H, D):
    """A projection + flex-attention block whose score mod adds an ALiBi bias per head."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.S, self.H, self.D = S, H, D
            slopes = torch.tensor([-((i + 1) * 8.0) / H for i in range(H)])
            self.register_buffer("alibi_bias", slopes, persistent=True)
            self.attention = attention
            self.project_qk = nn.Linear(H * D, H * D * 2)
            self.project_v = nn.Linear(H * D, H * D)

        def forward(self, hidden_states):
            batch = hidden_states.shape[0]

            def heads_first(t):
                return t.view(self.S, batch, self.H, self.D).permute(1, 2, 0, 3)

            q, k = self.project_qk(hidden_states).chunk(2, dim=2)
            q, k = heads_first(q), heads_first(k)
            v = heads_first(self.project_v(hidden_states))

            def alibi_score_mod(score, b, h, q_idx, kv_idx):
                return score + (q_idx - kv_idx) * self.alibi_bias[h]

            return self.attention(q, k, v, score_mod=alibi_score_mod)

    return Model()


# FlexAttention has no CPU backward in torch 2.13 and these tests train (q/k/v need grad).
_FLEX_ATTENTION_SKIP = unittest.skipIf(devices.accelerator_type() is None,
                               "Requires accelerator: FlexAttention does not support backward "
                               "on CPU, and q/k/v require grad here")


@requires_accelerator_dist_backend(["nccl", "xccl"], allow_cpu=True)
class TestSingleProc(DynamoDistributedSingleProcTestCase):
    device_type = device_type

    def get_model(self, bsz=20, in_feat=10, hidden_feat=5000, out_feat=5, ctx_manager=None):
        return get_model(self.device, bsz=bsz, in_feat=in_feat, hidden_feat=hidden_feat,
                         out_feat=out_feat, ctx_manager=ctx_manager)

    @patch.object(config, "optimize_ddp", False)
    def test_ddp_baseline_aot_eager(self):
        m, inputs, correct_outputs = self.get_model()
        ddp_m = DDP(m, device_ids=self.device_ids)
        ddp_m = torch.compile(ddp_m, backend="aot_eager")
        outputs = ddp_m(inputs)
        self.assertTrue(same(correct_outputs, outputs))

    @requires_inductor_backend
    @patch.object(config, "optimize_ddp", False)
    def test_ddp_baseline_inductor(self):
        m, inputs, correct_outputs = self.get_model()
        ddp_m = DDP(m, device_ids=self.device_ids)
        ddp_m = torch.compile(ddp_m, backend="inductor")
        outputs = ddp_m(inputs)
        self.assertTrue(same(correct_outputs, outputs))

    def _assert_ddp_optimizer_breaks(self, ddp_m, inputs, expected):
        """``explain`` reports ``expected`` graph breaks, all of them made by DDPOptimizer."""
        break_reasons = torch._dynamo.explain(ddp_m)(inputs).break_reasons
        self.assertEqual(len(break_reasons), expected)
        self.assertTrue(all("DDPOptimizer" in r.reason for r in break_reasons))

    @patch.object(config, "optimize_ddp", True)
    def test_graph_split(self):
        # 10->5000, 5000->5000, 5000->5000, 5000->5 with 25 MB buckets: three partitions.
        self.assertTrue(config.optimize_ddp)
        m, inputs, correct_outputs = self.get_model()
        ddp_m = DDP(m, device_ids=self.device_ids, bucket_cap_mb=25)
        check_splits_compiler = CheckSplitsCompiler()

        @torch.compile(backend=check_splits_compiler.compile_fn)
        def opt_fn(inputs):
            return ddp_m(inputs)

        opt_outputs = opt_fn(inputs)
        self.assertTrue(same(correct_outputs, opt_outputs))
        self.assertEqual(check_splits_compiler.compiler_called, 3)
        self._assert_ddp_optimizer_breaks(ddp_m, inputs, 3)

    @patch.object(config, "optimize_ddp", True)
    def test_graph_split_ctx_manager(self):
        # Four 1000x1000 float32 weights (~4 MB each) and 3.5 MB buckets: four partitions,
        # each of which must re-enter the context manager the model runs under.
        self.assertTrue(config.optimize_ddp)
        checks = (
            (functools.partial(torch.autocast, self.device_type, dtype=torch.float16),
             lambda out: self.assertEqual(out.dtype, torch.float16)),
            (torch.enable_grad, lambda out: self.assertTrue(out.requires_grad)),
            (torch.no_grad, lambda out: self.assertFalse(out.requires_grad)),
        )
        for make_compiler in (CheckSplitsCompiler, lambda: None):
            for ctx_manager, check_output in checks:
                counting_compiler = make_compiler()
                m, inputs, correct_outputs = self.get_model(
                    out_feat=1000, hidden_feat=1000, in_feat=1000, ctx_manager=ctx_manager)
                ddp_m = DDP(m, device_ids=self.device_ids, bucket_cap_mb=3.5)
                backend = counting_compiler.compile_fn if counting_compiler else "aot_eager"
                opt_fn = _compiled_call(ddp_m, backend)
                opt_outputs = opt_fn(inputs)
                self.assertTrue(same(correct_outputs, opt_outputs))
                if counting_compiler is not None:
                    self.assertEqual(counting_compiler.compiler_called, 4)
                check_output(opt_outputs)
                self._assert_ddp_optimizer_breaks(ddp_m, inputs, 4)

    def _run_flex_attention_ddp(self, attention):
        B, H, S, D = 16, 12, 512, 64
        model = _alibi_flex_attention_model(attention, S, H, D).to(self.device_type)
        model = torch.compile(model)
        model = DDP(model, device_ids=self.device_ids)
        hidden_states = torch.randn(B, S, H * D).to(self.device_type)
        model(hidden_states)
        torch.accelerator.synchronize()

    @_FLEX_ATTENTION_SKIP
    @skipIfXpu
    @patch.object(config, "optimize_ddp", True)
    def test_compiled_flex_attention_full_model_ddp(self):
        self._run_flex_attention_ddp(flex_attention)

    @_FLEX_ATTENTION_SKIP
    @skipIfXpu
    @patch.object(config, "optimize_ddp", True)
    def test_compiled_flex_attention_local_ddp(self):
        self._run_flex_attention_ddp(torch.compile(flex_attention))

    @requires_inductor_backend
    @patch.object(config, "optimize_ddp", True)
    def test_graph_split_inductor(self):
        self.assertTrue(config.optimize_ddp)
        m, inputs, correct_outputs = self.get_model()
        ddp_m = DDP(m, device_ids=self.device_ids, bucket_cap_mb=25)

        @torch.compile(backend="inductor")
        def opt_fn(inputs):
            return ddp_m(inputs)

        opt_outputs = opt_fn(inputs)
        self.assertTrue(same(correct_outputs, opt_outputs))

    @torch._inductor.config.patch({"layout_optimization": True, "keep_output_stride": False})
    @patch.object(config, "optimize_ddp", True)
    def _test_graph_split_inductor_layout_optimizations_impl(self, context):
        self.assertTrue(config.optimize_ddp)
        channel_dim = 512  # NHWC layout optimisation only kicks in above 64 channels

        class ToyModelConv(nn.Module):
            def __init__(self):
                super().__init__()
                layers = []
                for _ in range(4):
                    layers += [nn.Conv2d(channel_dim, channel_dim, 1, stride=1, bias=False),
                               nn.ReLU()]
                self.net = nn.Sequential(*layers)

            def forward(self, inputs):
                return self.net(inputs)

        def get_conv_model(device):
            model = ToyModelConv().to(device)
            model.apply(init_weights)
            inputs = torch.rand(2, channel_dim, channel_dim, 128).to(device)
            return model, inputs, model(inputs)

        with context():
            m, inputs, correct_outputs = get_conv_model(self.device)
            ddp_m = DDP(m, device_ids=self.device_ids, bucket_cap_mb=25)

            @torch.compile(backend="inductor")
            def opt_fn(inputs):
                return ddp_m(inputs)

            opt_outputs = opt_fn(inputs)
            self.assertTrue(same(correct_outputs, opt_outputs))

    @requires_inductor_backend
    def test_graph_split_inductor_layout_optimizations_training(self):
        self._test_graph_split_inductor_layout_optimizations_impl(contextlib.nullcontext)

    @requires_inductor_backend
    def test_graph_split_inductor_layout_optimizations_inference(self):
        self._test_graph_split_inductor_layout_optimizations_impl(torch.no_grad)

    @requires_inductor_backend
    @patch.object(config, "optimize_ddp", True)
    def test_graph_split_inductor_transpose(self):
        self.assertTrue(config.optimize_ddp)
        B, N, D, K = 100, 30, 50, 70

        class Foo(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear0 = nn.Linear(N, K)
                self.linear1 = nn.Linear(D * K, 2048)

            def forward(self, x):
                xt = x.transpose(2, 1)
                xt = self.linear0(xt).flatten(1)
                return self.linear1(xt)

        mod = Foo().to(self.device)
        compiled_mod = torch.compile(mod, backend="inductor")
        ddp_compiled_mod = DDP(compiled_mod, device_ids=self.device_ids)  # compile, then DDP

        for batch in (B, 2 * B, 3 * B):
            x = torch.randn(batch, N, D, dtype=torch.float32, device=self.device)
            self.assertTrue(same(mod(x), ddp_compiled_mod(x)))

    @patch.object(config, "optimize_ddp", True)
    def test_no_split(self):
        # A tiny model fits DDP's first (small) bucket: DDPOptimizer keeps one graph.
        m, inputs, correct_outputs = self.get_model(hidden_feat=5)
        ddp_m = DDP(m, device_ids=self.device_ids, bucket_cap_mb=250)
        check_splits_compiler = CheckSplitsCompiler()

        @torch.compile(backend=check_splits_compiler.compile_fn)
        def opt_fn(inputs):
            return ddp_m(inputs)

        opt_outputs = opt_fn(inputs)
        self.assertTrue(same(correct_outputs, opt_outputs))
        self.assertEqual(check_splits_compiler.compiler_called, 1)

    @patch.object(config, "optimize_ddp", True)
    def test_aot_autograd(self):
        # AOT compilers need example inputs propagated from one partition to the next.
        m, inputs, correct_outputs = self.get_model()
        ddp_m = DDP(m, device_ids=self.device_ids, bucket_cap_mb=25)

        @torch.compile(backend="aot_eager")
        def opt_fn(inputs):
            return ddp_m(inputs)

        opt_outputs = opt_fn(inputs)
        opt_outputs.sum().backward()
        self.assertTrue(same(correct_outputs, opt_outputs))

    @patch.object(config, "optimize_ddp", True)
    def test_custom_layer(self):
        m, inputs, correct_outputs = get_custom_model(self.device)
        ddp_m = DDP(m, device_ids=self.device_ids, bucket_cap_mb=1)
        check_splits_compiler = CheckSplitsCompiler()

        @torch.compile(backend=check_splits_compiler.compile_fn)
        def opt_fn(inputs):
            return ddp_m(*inputs)

        opt_outputs = opt_fn(inputs)
        self.assertTrue(same(correct_outputs, opt_outputs))
        self.assertEqual(check_splits_compiler.compiler_called, 3)

    @requires_inductor_backend
    def test_empty_graph_inductor(self):
        def fn():
            return (torch.distributed.distributed_c10d.get_world_size(),)

        opt_fn = torch.compile(fn, backend="inductor")
        res = None
        try:
            res = opt_fn()[0]
        except Exception:
            pass  # any failure shows up as ``res`` staying None
        self.assertEqual(res, 1)

    @patch.object(config, "optimize_ddp", False)
    def test_ignored_parameters(self):
        # DDPOptimizer is driven by hand here, so DDP's own hook into Dynamo stays off.
        m, inputs, correct_outputs = get_custom_model(self.device)
        parameters_to_ignore = ["seq.2.weight", "seq.4.linear.bias"]
        DDP._set_params_and_buffers_to_ignore_for_model(m, parameters_to_ignore)
        ddp_m = DDP(m, device_ids=self.device_ids, bucket_cap_mb=25)
        ignored_ids = {id(ddp_m.module.get_parameter(name)) for name in ddp_m.parameters_to_ignore}

        check_splits_compiler = CheckSplitsCompiler()
        ddp_optimizer = DDPOptimizer(bucket_bytes_cap=ddp_m.bucket_bytes_cap,
                                     backend_compile_fn=check_splits_compiler.compile_fn)

        @torch.compile(backend=ddp_optimizer.compile_fn)
        def opt_fn(inputs):
            return ddp_m(*inputs)

        opt_outputs = opt_fn(inputs)
        self.assertTrue(same(correct_outputs, opt_outputs))
        self.assertEqual(check_splits_compiler.compiler_called, 2)
        for bucket in ddp_optimizer.buckets:
            for param_id in bucket.param_ids:
                self.assertNotIn(param_id, ignored_ids)

    @patch.object(config, "optimize_ddp", True)
    def test_higher_order_op(self):
        from torch.utils.checkpoint import checkpoint

        N = 1000

        class InnerModule(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear1 = nn.Linear(N, N)
                self.linear2 = nn.Linear(N, N)

            def forward(self, x):
                return self.linear2(self.linear1(x))

        class MockModule(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner_mod1 = InnerModule()
                self.inner_mod2 = InnerModule()

            def forward(self, x):
                a = checkpoint(self.inner_mod1, x, use_reentrant=False)
                a = torch.cos(a)
                a = checkpoint(self.inner_mod2, a, use_reentrant=False)
                return torch.cos(a)

        mod = MockModule().to(self.device_type)
        mod = DDP(mod, bucket_cap_mb=1)
        x = torch.randn(N, N, device=self.device_type, requires_grad=True)
        cnt = CompileCounterWithBackend("aot_eager")
        opt_mod = torch.compile(mod, backend=cnt)
        opt_mod(x)  # must not raise: DDPOptimizer handles checkpoint's higher-order op

    def test_fsdp_orig_params_assert(self):
        m, _inputs, _correct_outputs = get_model(self.device)
        fsdp_m = FSDP(m, use_orig_params=False, device_id=fsdp_device_id())
        # Creating the compiled wrapper of a flat-param FSDP module must not raise.
        torch.compile(fsdp_m)

    def test_fsdp_skip_guards(self):
        global GUARDS_FILE
        GUARDS_FILE = StringIO()  # once: the text of both iterations accumulates

        for skip_guards, expected_guard_source in (
            (True, "local_fsdp_module"),
            (False, "local_unspecialized_nn_module"),
        ):
            torch._dynamo.reset()

            class ToyModel(nn.Module):
                def __init__(self, in_feat=10, hidden_feat=5000, out_feat=5):
                    super().__init__()
                    self.net = _eight_layer_net(in_feat, hidden_feat, out_feat)

                def forward(self, inputs):
                    out = self.net(inputs)

                    @comptime
                    def _(ctx):
                        ctx.print_guards(file=GUARDS_FILE)

                    return out

            model = ToyModel().to(self.device)
            inputs = torch.rand(20, 10).to(self.device)
            model.apply(init_weights)
            correct_outputs = model(inputs)
            model = FSDP(model, use_orig_params=True, device_id=fsdp_device_id())

            with config.patch(skip_fsdp_guards=skip_guards):
                opt_model = torch.compile(model, backend="aot_eager")
                outputs = opt_model(inputs)

            FileCheck().check("""local "L['self']" TYPE_MATCH""").check(
                f"""{expected_guard_source} "L['self']._modules['net']" TYPE_MATCH"""
            ).check(
                f"""{expected_guard_source} "L['self']._modules['net']._modules['0']" TYPE_MATCH"""
            ).run(GUARDS_FILE.getvalue())
            self.assertTrue(same(correct_outputs, outputs))

    def test_fsdp_skip_register_attr_or_module(self):
        class ToyModel(nn.Module):
            def __init__(self, in_feat=10, hidden_feat=5000):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(in_feat, hidden_feat), nn.ReLU(),
                                         nn.Linear(hidden_feat, hidden_feat), nn.ReLU())

            def forward(self, inputs):
                return self.net(inputs)

        torch._dynamo.reset()
        model = ToyModel().to(self.device)
        inputs = torch.rand(20, 10).to(self.device)
        model.apply(init_weights)
        correct_outputs = model(inputs)
        model = FSDP(model, use_orig_params=True, device_id=fsdp_device_id())
        fsdp_param_names = ("l__self___net_0_weight", "l__self___net_0_bias",
                            "l__self___net_2_weight", "l__self___net_2_bias")

        def no_fsdp_params_as_attributes(gm, example_inputs):
            for node in gm.graph.nodes:
                if node.op != "get_attr":
                    continue
                for name in fsdp_param_names:
                    self.assertFalse(name in node.name,
                                     f"FSDP module {name} should not be registered as attributes")
            return gm

        opt_model = torch.compile(model, backend=no_fsdp_params_as_attributes)
        outputs = opt_model(inputs)
        self.assertTrue(same(correct_outputs, outputs))

    def test_fsdp_dup_tensors_same_source(self):
        device = self.device_type

        class DuplicateModule(nn.Module):
            def __init__(self):
                super().__init__()
                self._param = torch.randn((3,), device=device)  # a plain tensor attribute
                self._buf = nn.Buffer(torch.randn((3,), requires_grad=False, device=device))

            def forward(self, x):
                z = x + self._buf + self._buf
                z += self._param + self._param
                return z

        model = DuplicateModule()
        fsdp_model = FSDP(copy.deepcopy(model), use_orig_params=True, device_id=fsdp_device_id())
        fsdp_model = torch.compile(fsdp_model, backend="aot_eager")
        inp = torch.randn((2, 3), device=device)
        local_out = model(inp)
        fsdp_out = fsdp_model(inp)
        self.assertEqual(local_out, fsdp_out)

    @patch.object(config, "guard_nn_modules", True)
    def test_fsdp_dup_tensors_diff_source(self):
        device = self.device_type

        class BufModule(nn.Module):
            def __init__(self):
                super().__init__()
                self._buf = nn.Buffer(torch.randn((3,), requires_grad=False, device=device))

            def forward(self, x):
                return x + self._buf

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self._param = nn.Parameter(torch.randn((1,), device=device))
                self._buf_module = BufModule()
                # One tensor reachable under two attribute paths.
                self.register_buffer("_buf", self._buf_module._buf)

            def forward(self, x):
                self._buf.mul_(2)
                z = x + self._buf
                z = self._buf_module(z)
                z += self._param
                return z

        fsdp_model = FSDP(Model(), use_orig_params=True, device_id=fsdp_device_id())
        cnt = CompileCounterWithBackend("aot_eager")
        fsdp_model = torch.compile(fsdp_model, backend=cnt)
        inp = torch.randn((2, 3), device=device)
        for _ in range(15):
            fsdp_model(inp)
        # Wrong de-duplication guards would recompile on every call.
        self.assertEqual(cnt.frame_count, 1)

    def test_fsdp_staticmethod(self):
        device = self.device_type

        class ModuleWithStaticMethod(nn.Module):
            def __init__(self, use_self: bool):
                super().__init__()
                self._use_self = use_self
                torch.manual_seed(42)  # same parameter in every instance
                self._param = nn.Parameter(torch.randn((3,), device=device))

            def forward(self, x):
                if self._use_self:
                    z = self._add(x, self._param)
                else:
                    z = ModuleWithStaticMethod._add(x, self._param)
                z *= 2
                return z

            @staticmethod
            def _add(x, y):
                return x + y

        model = ModuleWithStaticMethod(False)
        x = torch.randn((2, 3), device=device)
        ref_out = model(x)
        test_outs = []

        for use_self in (False, True):
            model = ModuleWithStaticMethod(use_self)
            fsdp_model = FSDP(model, use_orig_params=True, device_id=fsdp_device_id())
            cnt = CompileCounterWithBackend("aot_eager")
            fsdp_model = torch.compile(fsdp_model, backend=cnt)
            test_outs.append(fsdp_model(x))
            self.assertEqual(cnt.frame_count, 1)

        for out in test_outs:
            self.assertEqual(out, ref_out)

    def test_async_subclass_no_specialize(self):
        cnt = CompileCounterWithBackend("eager")

        @torch.compile(backend=cnt, fullgraph=True, dynamic=True)
        def f(x):
            return x + 1

        f(_maybe_wrap_tensor(torch.randn(10)))
        f(_maybe_wrap_tensor(torch.randn(12)))
        self.assertEqual(cnt.frame_count, 1)


if __name__ == "__main__":
    run_tests()
