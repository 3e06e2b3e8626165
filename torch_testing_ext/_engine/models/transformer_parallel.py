"""How the toy :class:`Transformer` is parallelized: the tensor-parallel plan of its layers and
the parallel styles of its experts (tensor-, expert-, and expert+tensor-parallel).

Token exchanges go through DTensor redistributions, so their gradients are the collectives'
duals: gathering tokens (Shard -> Replicate, gradient declared Partial) reduce-scatters in the
backward pass, and summing expert outputs back (Partial -> Shard) all-gathers.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import (
    DTensor,
    Partial,
    Placement,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
)
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    ParallelStyle,
    PrepareModuleInput,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)

from .._torch_private import concatenate_meshes

__all__ = ["TensorParallelForExpert", "ExpertParallel", "ExpertParallelWithTP",
           "parallelize_transformer"]

__unittest = True


def _gather_tokens(x: torch.Tensor, mesh: DeviceMesh) -> torch.Tensor:
    """Every rank's tokens, concatenated on dim 0; the gradient is reduce-scattered back."""
    whole = DTensor.from_local(x, mesh, [Shard(0)]).redistribute(mesh, [Replicate()])
    return whole.to_local(grad_placements=[Partial()])


def _sum_outputs(out: torch.Tensor, mesh: DeviceMesh, layout: Placement) -> torch.Tensor:
    """The sum over ranks of ``out``, laid out as ``layout`` (Replicate, or Shard(0) back to
    the tokens' owners)."""
    return DTensor.from_local(out, mesh, [Partial()]).redistribute(mesh, [layout]).to_local()


def _shard_expert_weights(experts: nn.Module, mesh: DeviceMesh,
                          placements: dict[str, list[Placement]]) -> None:
    for name, param in list(experts.named_parameters(recurse=False)):
        if name in placements:
            experts.register_parameter(
                name, nn.Parameter(distribute_tensor(param, mesh, placements[name])))


class TensorParallelForExpert(ParallelStyle):
    """Experts' ``w1`` column-wise (Shard(1)) and ``w2`` row-wise (Shard(2)); outputs summed.

    With ``input_layouts=Shard(0)`` (sequence parallel) tokens are gathered first, and
    ``output_layouts`` says how the summed outputs are laid out (default Replicate).
    """

    def __init__(self, *, input_layouts: Placement | None = None,
                 output_layouts: Placement | None = None) -> None:
        super().__init__()
        self.input_layouts = input_layouts
        self.output_layouts = output_layouts or Replicate()

    def _apply(self, module: nn.Module, device_mesh: DeviceMesh) -> nn.Module:
        def partition(name: str, mod: nn.Module, mesh: DeviceMesh) -> None:
            _shard_expert_weights(mod, mesh, {"w1": [Shard(1)], "w2": [Shard(2)]})

        def inputs(mod: nn.Module, args: tuple[Any, ...], mesh: DeviceMesh) -> tuple[Any, ...]:
            if self.input_layouts is None:
                return args
            whole = DTensor.from_local(args[0], mesh, [self.input_layouts])
            return (whole.redistribute(mesh, [Replicate()]).to_local(),)

        def outputs(mod: nn.Module, out: torch.Tensor, mesh: DeviceMesh) -> torch.Tensor:
            return _sum_outputs(out, mesh, self.output_layouts)

        # The hooks distribute_module would register for input_fn and output_fn (which torch
        # annotates as returning None, though they return the new inputs and output).
        module = distribute_module(module, device_mesh, partition_fn=partition)
        module.register_forward_pre_hook(lambda mod, args: inputs(mod, args, device_mesh))
        module.register_forward_hook(lambda mod, args, out: outputs(mod, out, device_mesh))
        return module


class ExpertParallel(ParallelStyle):
    """Experts split across ranks (Shard(0) of the expert dimension): every rank sees every
    token, and each token's outputs are summed back on the rank that owns it."""

    def _apply(self, module: nn.Module, device_mesh: DeviceMesh) -> nn.Module:
        def partition(name: str, mod: nn.Module, mesh: DeviceMesh) -> None:
            _shard_expert_weights(mod, mesh, {n: [Shard(0)] for n, _ in
                                              mod.named_parameters(recurse=False)})

        def dispatch(mod: nn.Module, args: tuple[Any, ...], mesh: DeviceMesh) -> tuple[Any, ...]:
            return (_gather_tokens(args[0], mesh),)

        def combine(mod: nn.Module, out: torch.Tensor, mesh: DeviceMesh) -> torch.Tensor:
            return _sum_outputs(out, mesh, Shard(0))

        # The hooks registered as in TensorParallelForExpert.
        module = distribute_module(module, device_mesh, partition_fn=partition)
        module.register_forward_pre_hook(lambda mod, args: dispatch(mod, args, device_mesh))
        module.register_forward_hook(lambda mod, args, out: combine(mod, out, device_mesh))
        return module


class ExpertParallelWithTP(ParallelStyle):
    """Experts on a 2-D (ep, tp) mesh, applied to an ``ExpertLayer``: weights
    [Shard(0), Shard(1)] / [Shard(0), Shard(2)]; tokens exchanged over ``ep_mesh`` around the
    layer, expert outputs summed over ``tp_mesh`` inside it."""

    def __init__(self, ep_mesh: DeviceMesh, tp_mesh: DeviceMesh) -> None:
        super().__init__()
        self.ep_mesh = ep_mesh
        self.tp_mesh = tp_mesh
        self.ep_tp_mesh = concatenate_meshes([ep_mesh, tp_mesh])

    def _apply(self, module: nn.Module, device_mesh: DeviceMesh) -> nn.Module:
        experts = module.get_submodule("experts")
        _shard_expert_weights(experts, self.ep_tp_mesh,
                              {"w1": [Shard(0), Shard(1)], "w2": [Shard(0), Shard(2)]})
        ep_mesh, tp_mesh = self.ep_mesh, self.tp_mesh
        module.register_forward_pre_hook(lambda mod, args: (_gather_tokens(args[0], ep_mesh),))
        module.register_forward_hook(lambda mod, args, out: _sum_outputs(out, ep_mesh, Shard(0)))

        def tp_input(mod: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
            # Each tp rank uses the whole input: its gradients are summed over tp_mesh.
            same = DTensor.from_local(args[0], tp_mesh, [Replicate()])
            return (same.to_local(grad_placements=[Partial()]),)

        experts.register_forward_pre_hook(tp_input)
        experts.register_forward_hook(
            lambda mod, args, out: _sum_outputs(out, tp_mesh, Replicate()))
        return module


def _layer_plan(layer: nn.Module, seq_parallel: bool, local_output_for_attn: bool,
                experts_on_tp: bool) -> dict[str, ParallelStyle]:
    plan: dict[str, ParallelStyle] = {}
    if seq_parallel:
        plan["attention"] = PrepareModuleInput(input_layouts=Shard(1),
                                               desired_input_layouts=Replicate())
        plan["attention_norm"] = SequenceParallel()
        plan["ffn_norm"] = SequenceParallel()
    for name in ("wq", "wk", "wv"):
        plan[f"attention.{name}"] = ColwiseParallel(use_local_output=local_output_for_attn)
    sequence = Shard(1) if seq_parallel else None  # None: the style's default layout
    plan["attention.wo"] = RowwiseParallel(output_layouts=sequence)
    if not layer.has_experts:
        plan["feed_forward.w1"] = ColwiseParallel(input_layouts=sequence)
        plan["feed_forward.w2"] = RowwiseParallel(output_layouts=sequence)
    elif experts_on_tp:
        layouts = {"input_layouts": Shard(0), "output_layouts": Shard(0)} if seq_parallel else {}
        plan["expert_layer.experts"] = TensorParallelForExpert(**layouts)
    return plan


def parallelize_transformer(module: nn.Module, tp_mesh: DeviceMesh | None, use_seq_parallel: bool,
                            local_output_for_attn: bool = False,
                            ep_mesh: DeviceMesh | None = None) -> nn.Module:
    """What ``Transformer.parallelize`` does to a ``Transformer`` (see the module docstring)."""
    # ``module`` is a dtensor_models.Transformer, which imports this module and so cannot be
    # named here: its parts are read through ``model``, as untyped as nn.Module's attributes.
    model: Any = module
    if tp_mesh is None and ep_mesh is None:
        raise ValueError("Transformer.parallelize needs tp_mesh, ep_mesh or both")
    if tp_mesh is not None:
        embedding_out = ((Shard(1), Shard(0)) if use_seq_parallel else (Replicate(), Replicate()))
        root: dict[str, ParallelStyle] = {
            "tok_embeddings": RowwiseParallel(input_layouts=Replicate(),
                                              output_layouts=embedding_out[0]),
            "pos_embeddings": RowwiseParallel(input_layouts=Replicate(),
                                              output_layouts=embedding_out[1]),
        }
        if use_seq_parallel:
            root["norm"] = SequenceParallel()
        parallelize_module(module, tp_mesh, root)
    for layer in model.layers:
        if tp_mesh is not None:
            plan = _layer_plan(layer, use_seq_parallel, local_output_for_attn, ep_mesh is None)
            parallelize_module(layer, tp_mesh, plan)
        if ep_mesh is not None and layer.has_experts:
            if tp_mesh is not None:
                parallelize_module(layer.expert_layer, ep_mesh, ExpertParallelWithTP(ep_mesh, tp_mesh))
            else:
                parallelize_module(layer.expert_layer.experts, ep_mesh, ExpertParallel())
    if tp_mesh is not None:
        output_style = (ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())
                        if use_seq_parallel else ColwiseParallel(output_layouts=Replicate()))
        parallelize_module(model.output, tp_mesh, output_style)
        if local_output_for_attn:
            for layer in model.layers:
                layer.attention.n_heads = model.model_args.n_heads // tp_mesh.size()
        if model.model_args.weight_tying:
            model.output.weight = model.tok_embeddings.weight  # share again after sharding
    return module
