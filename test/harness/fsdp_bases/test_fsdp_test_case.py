"""Self-tests of ``common_fsdp``: ``FSDPTest`` ranks with a default group, ``fully_shard``
training that matches a single-process reference step for step (losses, and parameters and
gradients through ``check_sharded_parity``), the patches really intercepting ``fully_shard``'s
collectives and steps, the test models built with upstream's signatures, ``run_subtests``
inside an ``FSDPTest``, ``compiled_fsdp_test``, and the one CPU limit (pinned-memory offload).
The training and ``run_subtests`` checks are those of ``FSDPTestMultiThread`` too
(``fixtures/fsdp_shared_checks.py``).
"""

import collections
import copy
import functools
import unittest
import warnings
from unittest import mock

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import CPUOffloadPolicy, FullyShardedDataParallel, fully_shard

from torch_testing_ext import devices
from torch_testing_ext._engine._torch_private import (
    fsdp_param_group_class,
    fsdp_param_group_module,
    fsdp_post_backward_function_class,
    inductor_config,
)
from torch_testing_ext._engine.fsdp_bases import compiled_fsdp
from torch_testing_ext._engine.fsdp_bases.fsdp_cpu_limits import PIN_MEMORY_ERRORS, PINNED_MEMORY_SKIP_REASON
from torch_testing_ext.common_distributed import init_single_process_group
from torch_testing_ext.common_fsdp import (
    MLP,
    AlwaysWrapNestedWrappedModule,
    DEVICEInitMode,
    DoubleLinear,
    FSDPInitMode,
    FSDPTest,
    MLPStack,
    NestedWrappedModule,
    TransformerWithSharedParams,
    compiled_fsdp_test,
    get_devtype,
    get_full_params,
    patch_all_gather,
    patch_foreach_all_gather,
    patch_foreach_reduce,
    patch_post_backward,
    patch_reduce_scatter,
    patch_register_post_backward_hook_backward,
    patch_reshard,
    patch_unshard,
    reduce_scatter_with_assert,
    requires_pinned_memory,
)
from torch_testing_ext.common_utils import TestCase

from fixtures.fake_devices import pretend_accelerator
from fixtures.fsdp_shared_checks import RunSubtestsChecks, TrainParityChecks

CPU_ONLY = devices.accelerator_type() is None


def shapes(module):
    return {name: tuple(p.shape) for name, p in module.named_parameters()}


class TestFSDPTestRanks(RunSubtestsChecks, FSDPTest):
    def test_rank_has_a_default_group_on_its_backend(self):
        self.assertEqual(self.world_size, 2 if CPU_ONLY else max(2, min(devices.device_count(), 8)))
        self.assertIs(self.process_group, dist.group.WORLD)
        self.assertEqual((dist.get_rank(), dist.get_world_size()), (self.rank, self.world_size))
        self.assertEqual(dist.get_backend(), devices.default_backend(self.device))
        self.assertEqual(self.init_method, f"file://{self.file_name}")
        self.assertEqual(get_devtype(), torch.device(devices.device_type()))
        ranks = [None] * self.world_size
        dist.all_gather_object(ranks, self.rank)
        self.assertEqual(ranks, list(range(self.world_size)))


class TestFullyShardTrainingParity(TrainParityChecks, FSDPTest):
    """Training parity on rank processes (the mixin's test)."""


class TestPatchesIntercept(FSDPTest):
    def test_patches_intercept_fully_shard(self):
        torch.manual_seed(0)
        model = MLP(8, device=get_devtype())
        fully_shard(model.in_proj, reshard_after_forward=False)
        fully_shard(model.out_proj, reshard_after_forward=False)
        fully_shard(model, reshard_after_forward=False)
        counts = collections.Counter()
        gathered_sizes = []
        orig_all_gather = dist.all_gather_single
        orig_reduce_scatter = dist.reduce_scatter_single
        group_class = fsdp_param_group_class()
        originals = {name: getattr(group_class, name) for name in ("unshard", "reshard", "post_backward")}
        orig_backward = fsdp_post_backward_function_class().backward
        orig_foreach_all_gather = fsdp_param_group_module().foreach_all_gather
        orig_foreach_reduce = fsdp_param_group_module().foreach_reduce

        def counted(name, original):
            def replacement(*args, **kwargs):
                counts[name] += 1
                return original(*args, **kwargs)
            return replacement

        def all_gather(output, input, *args, **kwargs):
            counts["all_gather"] += 1
            gathered_sizes.append((output.numel(), input.numel()))
            return orig_all_gather(output, input, *args, **kwargs)

        def run_step():
            model(torch.randn(4, 8, device=get_devtype())).sum().backward()

        with patch_all_gather(all_gather), \
                patch_reduce_scatter(counted("reduce_scatter", orig_reduce_scatter)), \
                patch_foreach_all_gather(counted("foreach_all_gather", orig_foreach_all_gather)), \
                patch_foreach_reduce(counted("foreach_reduce", orig_foreach_reduce)), \
                patch_unshard(counted("unshard", originals["unshard"])), \
                patch_reshard(counted("reshard", originals["reshard"])), \
                patch_post_backward(counted("post_backward", originals["post_backward"])), \
                patch_register_post_backward_hook_backward(counted("hook_backward", orig_backward)):
            run_step()
        # Two parameter groups, resharded only after backward: each is all-gathered once in
        # forward and reduce-scattered once in backward.
        self.assertEqual(counts["all_gather"], 2)
        self.assertEqual(counts["foreach_all_gather"], 2)
        self.assertEqual(counts["reduce_scatter"], 2)
        self.assertEqual(counts["foreach_reduce"], 2)
        self.assertEqual(counts["post_backward"], 2)
        self.assertGreaterEqual(counts["unshard"], 2)
        self.assertGreaterEqual(counts["reshard"], 2)
        self.assertGreaterEqual(counts["hook_backward"], 1)
        for output_numel, input_numel in gathered_sizes:
            self.assertEqual(output_numel, input_numel * self.world_size)
        # Restored: another step counts nothing.
        self.assertIs(dist.all_gather_single, orig_all_gather)
        before = dict(counts)
        run_step()
        self.assertEqual(dict(counts), before)

    def test_reduce_scatter_with_assert_sees_each_output(self):
        torch.manual_seed(0)
        model = MLP(8, device=get_devtype())
        fully_shard(model)
        outputs = []
        orig_reduce_scatter = dist.reduce_scatter_single
        checked = functools.partial(reduce_scatter_with_assert, self, orig_reduce_scatter,
                                    lambda output: outputs.append(output.numel()))
        with patch_reduce_scatter(checked):
            model(torch.randn(2, 8, device=get_devtype())).sum().backward()
        local_numel = sum(p.to_local().numel() for p in model.parameters())
        self.assertEqual(outputs, [local_numel])


class TestCpuOffload(FSDPTest):
    def test_unpinned_cpu_offload_trains_on_any_device(self):
        torch.manual_seed(0)
        model = MLP(8)
        reference = copy.deepcopy(model).to(get_devtype())
        fully_shard(model, offload_policy=CPUOffloadPolicy(pin_memory=False))
        for param in model.parameters():
            self.assertEqual(param.to_local().device, torch.device("cpu"))
        inp = torch.randn(2, 8, device=get_devtype())
        loss = model(inp).sum()
        loss.backward()
        self.assertEqual(loss, reference(inp).sum())

    @requires_pinned_memory
    def test_pinned_cpu_offload(self):
        model = MLP(8)
        fully_shard(model, offload_policy=CPUOffloadPolicy())
        model(torch.randn(2, 8, device=get_devtype())).sum().backward()
        for param in model.parameters():
            self.assertTrue(param.to_local().is_pinned())


class TestCpuLimits(TestCase):
    @unittest.skipUnless(CPU_ONLY, "the limit is that of a CPU-only machine")
    def test_pinned_offload_fails_on_cpu_as_the_skip_says(self):
        init_single_process_group("gloo")
        try:
            with self.assertRaisesRegex(RuntimeError, PIN_MEMORY_ERRORS):
                fully_shard(MLP(4), offload_policy=CPUOffloadPolicy())
        finally:
            dist.destroy_process_group()

    def test_requires_pinned_memory_skips_before_ranks_start(self):
        with pretend_accelerator(None):
            result = unittest.TestResult()
            TestCpuOffload("test_pinned_cpu_offload").run(result)
        self.assertEqual([reason for _, reason in result.skipped], [PINNED_MEMORY_SKIP_REASON])

    def test_too_few_accelerators_skip_before_ranks_start(self):
        class Wide(FSDPTest):
            world_size = 4

            def test_x(self):
                raise AssertionError("must not run")

        with pretend_accelerator("cuda", 2):
            result = unittest.TestResult()
            Wide("test_x").run(result)
        self.assertEqual([reason for _, reason in result.skipped], ["Need at least 4 CUDA devices"])


class TestModels(TestCase):
    def setUp(self):
        super().setUp()
        init_single_process_group("gloo")
        self.addCleanup(dist.destroy_process_group)
        self.group = dist.group.WORLD

    def test_mlp(self):
        self.assertEqual(shapes(MLP(4)), {"in_proj.weight": (16, 4), "in_proj.bias": (16,),
                                          "out_proj.weight": (4, 16), "out_proj.bias": (4,)})
        self.assertIsNone(MLP(4).buffer)
        mlp = MLP(4, torch.device("cpu"), bias=False, with_buffer=True, dim_multiplier=3)
        self.assertEqual(shapes(mlp), {"in_proj.weight": (12, 4), "out_proj.weight": (4, 12)})
        self.assertEqual(tuple(mlp.buffer.shape), (4,))
        x = torch.randn(2, 4)
        expected = torch.relu(mlp.out_proj(torch.relu(mlp.in_proj(x)))) + mlp.buffer
        self.assertEqual(mlp(x), expected)

    def test_mlp_stack(self):
        stack = MLPStack(8)
        self.assertEqual([m.in_proj.out_features for m in stack], [24, 32, 24])
        self.assertFalse(stack.with_seq_parallel)
        seq = MLPStack(8, with_seq_parallel=True)
        self.assertIsInstance(seq[3], nn.LayerNorm)
        self.assertIsNone(seq[3].bias)
        self.assertEqual(tuple(seq(torch.randn(2, 3, 8)).shape), (2, 3, 8))

    def test_double_linear(self):
        both = DoubleLinear(4)
        self.assertEqual(sorted(shapes(both)), ["lin1.bias", "lin1.weight", "lin2.bias", "lin2.weight"])
        out = both(torch.randn(2, 4))
        self.assertEqual(len(out), 2)
        self.assertIsInstance(DoubleLinear(4, use_second_linear=False)(torch.randn(2, 4)), torch.Tensor)

    def test_init_modes(self):
        self.assertEqual([m.name for m in FSDPInitMode], ["NO_FSDP", "RECURSIVE"])
        self.assertEqual([m.name for m in DEVICEInitMode],
                         ["DEVICE_BEFORE", "DEVICE_AFTER", "DEVICE_NEVER"])

    def test_transformer_with_shared_params(self):
        model = TransformerWithSharedParams.init(self.group, FSDPInitMode.NO_FSDP,
                                                 DEVICEInitMode.DEVICE_BEFORE, deterministic=True)
        again = TransformerWithSharedParams.init(self.group, FSDPInitMode.NO_FSDP,
                                                 DEVICEInitMode.DEVICE_BEFORE, deterministic=True)
        self.assertIs(model.output_proj.weight, model.embed_tokens.weight)
        self.assertEqual(tuple(model.embed_tokens.weight.shape), (23, 16))
        self.assertEqual(dict(model.named_buffers())["long_buffer"].dtype, torch.long)
        self.assertIsInstance(model.bn, nn.BatchNorm1d)
        self.assertEqual(list(model.parameters()), list(again.parameters()))
        inp = model.get_input(get_devtype())
        self.assertEqual([tuple(t.shape) for t in inp], [(6, 2), (4, 2)])
        out = model(*inp)
        self.assertEqual(tuple(out.shape), (4, 2, 23))
        model.run_backward(model.get_loss(inp, out))
        self.assertIsNotNone(model.embed_tokens.weight.grad)
        self.assertEqual(model.get_ignored_modules(), [model.transformer])
        no_bn = TransformerWithSharedParams.init(self.group, FSDPInitMode.NO_FSDP,
                                                 DEVICEInitMode.DEVICE_NEVER, add_bn=False)
        self.assertIsInstance(no_bn.bn, nn.Identity)

    def test_transformer_wrapped_with_fsdp(self):
        model = TransformerWithSharedParams.init(self.group, FSDPInitMode.RECURSIVE,
                                                 DEVICEInitMode.DEVICE_AFTER, deterministic=True)
        self.assertIsInstance(model, FullyShardedDataParallel)
        wrapped = [m for m in model.modules() if isinstance(m, FullyShardedDataParallel)]
        self.assertEqual(len(wrapped), 1 + 2 + 2)  # the root, 2 encoder and 2 decoder layers
        inp = model.module.get_input(get_devtype())
        model.module.run_backward(model.module.get_loss(inp, model(*inp)))
        plain = TransformerWithSharedParams.init(self.group, FSDPInitMode.NO_FSDP,
                                                 DEVICEInitMode.DEVICE_BEFORE, deterministic=True)
        self.assertEqual(get_full_params(model), list(plain.parameters()))

    def test_nested_wrapped_module(self):
        plain = NestedWrappedModule.init(self.group, FSDPInitMode.NO_FSDP, DEVICEInitMode.DEVICE_BEFORE,
                                         deterministic=True)
        self.assertEqual(shapes(plain), {
            "module.0.weight": (4, 8), "module.0.bias": (4,),
            "module.1.0.weight": (16, 4), "module.1.0.bias": (16,),
            "module.1.1.weight": (16, 16), "module.1.1.bias": (16,),
            "module.2.weight": (4, 16), "module.2.bias": (4,),
            "module.3.weight": (8, 4), "module.3.bias": (8,),
        })
        nested = NestedWrappedModule.init(self.group, FSDPInitMode.RECURSIVE, DEVICEInitMode.DEVICE_AFTER,
                                          deterministic=True)
        self.assertNotIsInstance(nested, FullyShardedDataParallel)
        for wrapped in (nested.module[1], nested.module[1].module[0], nested.module[2]):
            self.assertIsInstance(wrapped, FullyShardedDataParallel)
        inp = nested.get_input(get_devtype())
        self.assertEqual(nested(*inp), plain(*inp))
        always = AlwaysWrapNestedWrappedModule.init(self.group, FSDPInitMode.RECURSIVE,
                                                    DEVICEInitMode.DEVICE_BEFORE, deterministic=True)
        self.assertIsInstance(always, FullyShardedDataParallel)
        self.assertEqual(always(*inp), plain(*inp))

    def test_unknown_init_mode_is_one_clear_error(self):
        with self.assertRaisesRegex(ValueError, "Unsupported FSDP init mode: 'recursive'"):
            NestedWrappedModule.init(self.group, "recursive", DEVICEInitMode.DEVICE_BEFORE)


class TestPatchesOutsideRanks(TestCase):
    def test_restored_after_an_error_and_not_callable_refused(self):
        original = dist.all_gather_single
        backward = fsdp_post_backward_function_class().__dict__["backward"]
        with self.assertRaisesRegex(KeyError, "boom"):
            with patch_all_gather(lambda *a, **k: None), \
                    patch_register_post_backward_hook_backward(lambda *a: None):
                self.assertIsNot(dist.all_gather_single, original)
                raise KeyError("boom")
        self.assertIs(dist.all_gather_single, original)
        self.assertIs(fsdp_post_backward_function_class().__dict__["backward"], backward)
        with self.assertRaisesRegex(TypeError, "must be callable"):
            with patch_unshard(None):
                pass


class TestCompiledFSDPTest(TestCase):
    def setUp(self):
        super().setUp()
        init_single_process_group("gloo")
        self.addCleanup(dist.destroy_process_group)

    def test_eager_only_without_gpu_inductor(self):
        runs = []

        @compiled_fsdp_test()
        def body():
            runs.append(fully_shard)

        with mock.patch.object(compiled_fsdp.devices, "has_gpu_inductor", lambda: False), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            body()
        self.assertEqual(runs, [fully_shard])
        self.assertIn(compiled_fsdp.COMPILED_COMPUTE_SKIP_WARNING, [str(w.message) for w in caught])

    def test_compiled_run_compiles_the_chosen_modules(self):
        compiled = []
        runs = []

        threads = []

        @compiled_fsdp_test(compile_compute_on_module=nn.Linear)
        def body():
            runs.append(fully_shard)
            threads.append(inductor_config().compile_threads)
            model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
            with mock.patch.object(nn.Module, "compile", lambda self: compiled.append(type(self))):
                fully_shard(model[0])
                self.assertIsInstance(fully_shard(model), nn.Sequential)

        with mock.patch.object(compiled_fsdp.devices, "has_gpu_inductor", lambda: True):
            body()
        self.assertEqual(len(runs), 2)
        self.assertIs(runs[0], fully_shard)
        self.assertIsNot(runs[1], fully_shard)
        # The Linear (now fully_shard's FSDPLinear subclass) is compiled, the Sequential is not.
        self.assertEqual([issubclass(kind, nn.Linear) for kind in compiled], [True])
        self.assertIs(globals()["fully_shard"], runs[0])  # restored
        self.assertEqual(threads, [threads[0], 1])  # one compile thread for the compiled run
        self.assertEqual(inductor_config().compile_threads, threads[0])  # restored
