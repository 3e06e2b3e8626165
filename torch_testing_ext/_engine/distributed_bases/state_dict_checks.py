"""``VerifyStateDictMixin``: checks that a distributed state dict (from
``torch.distributed.checkpoint.state_dict``: ``get_model_state_dict``,
``get_optimizer_state_dict``...) holds the same values as a plain model's or optimizer's.

A ``DTensor`` (or ``ShardedTensor``) in the distributed dict is gathered whole before the
comparison, so these calls are collective: every rank of the tensors' group makes them.

Example::

    class TestDSD(VerifyStateDictMixin, FSDPTest):
        def test_model(self):
            ...
            self._verify_msd(model.state_dict(), get_model_state_dict(fsdp_model))
            self._verify_osd(model, optim, optim.state_dict(), get_optimizer_state_dict(fsdp_model, fsdp_optim))
"""

from __future__ import annotations

import copy
import unittest
from collections.abc import Mapping
from itertools import chain
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_state_dict
from torch.distributed.tensor import DTensor

__all__ = ["VerifyStateDictMixin", "full_tensor", "gathered_state_dict"]

__unittest = True

# The keys of an optimizer state dict (torch.optim.Optimizer.state_dict's format).
STATE = "state"
PARAM_GROUPS = "param_groups"


def _is_sharded_tensor(value: Any) -> bool:
    # torch.distributed's legacy ShardedTensor, known by its public methods.
    return isinstance(value, torch.Tensor) and callable(getattr(value, "local_shards", None)) \
        and callable(getattr(value, "metadata", None))


def _sharded_tensor_whole(value: Any) -> torch.Tensor:
    """The whole tensor of a ``ShardedTensor``, from every rank's shards (collective)."""
    pieces = [(list(s.metadata.shard_offsets), list(s.metadata.shard_sizes), s.tensor.detach().cpu())
              for s in value.local_shards()]
    gathered: list[Any] = [None] * dist.get_world_size()  # its shards on the default group
    dist.all_gather_object(gathered, pieces)
    metadata = value.metadata()
    whole = torch.empty(tuple(metadata.size), dtype=metadata.tensor_properties.dtype)
    for rank_pieces in gathered:
        for offsets, sizes, tensor in rank_pieces:
            whole[tuple(slice(o, o + n) for o, n in zip(offsets, sizes, strict=True))] = tensor
    local = value.local_shards()
    return whole.to(local[0].tensor.device) if local else whole


def full_tensor(value: Any) -> Any:
    """A ``DTensor`` or ``ShardedTensor`` gathered whole (collective); anything else as is."""
    if isinstance(value, DTensor):
        return value.full_tensor()
    if _is_sharded_tensor(value):
        return _sharded_tensor_whole(value)
    return value


def gathered_state_dict(state: Any) -> Any:
    """A copy of a (nested) state dict with every ``DTensor``/``ShardedTensor`` whole."""
    if isinstance(state, Mapping):
        return {key: gathered_state_dict(value) for key, value in state.items()}
    if isinstance(state, list):
        return [gathered_state_dict(value) for value in state]
    if isinstance(state, tuple):
        return tuple(gathered_state_dict(value) for value in state)
    return full_tensor(state)


class VerifyStateDictMixin:
    """Checks for a ``unittest.TestCase`` (mix it in before the case): a distributed model or
    optimizer state dict against the plain one."""

    def _checker(self) -> unittest.TestCase:
        if not isinstance(self, unittest.TestCase):
            raise TypeError("VerifyStateDictMixin must be mixed into a unittest.TestCase")
        return self

    def _compare_tensor(self, orig_tensor: torch.Tensor, dist_tensor: Any,
                        offload_to_cpu: bool = False) -> None:
        """``dist_tensor`` (gathered whole if distributed) is a tensor close to ``orig_tensor``
        (``torch.allclose``; both on CPU first with ``offload_to_cpu``)."""
        test = self._checker()
        dist_tensor = full_tensor(dist_tensor)
        if offload_to_cpu:
            orig_tensor, dist_tensor = orig_tensor.cpu(), dist_tensor.cpu()
        test.assertIsInstance(dist_tensor, torch.Tensor)
        test.assertTrue(torch.allclose(orig_tensor, dist_tensor),
                        f"not close: {orig_tensor} vs {dist_tensor}")

    def _verify_msd(self, msd: Mapping[str, Any], dist_msd: Mapping[str, Any],
                    options: StateDictOptions | None = None, offload_to_cpu: bool = False) -> None:
        """Model state dicts: the same keys (unless ``options.ignore_frozen_params``, where a
        key may be missing from ``dist_msd`` if its parameter is frozen) and close values. A
        mismatch names the key."""
        test = self._checker()
        options = options if options is not None else StateDictOptions()
        if not options.ignore_frozen_params:
            test.assertEqual(sorted(msd), sorted(dist_msd), "the state dicts' keys differ")
        for fqn, param in msd.items():
            dist_param = dist_msd.get(fqn)
            if dist_param is None:
                if options.ignore_frozen_params:
                    test.assertFalse(param.requires_grad, f"{fqn} is trainable but missing")
                    continue
                test.fail(f"{fqn} is missing from the distributed state dict")
            try:
                self._compare_tensor(param, dist_param, offload_to_cpu)
            except AssertionError as error:
                raise AssertionError(f"{fqn} has mismatched value {param} {dist_param}") from error

    def _verify_osd(self, model: nn.Module, optim: torch.optim.Optimizer, osd: Mapping[str, Any],
                    dist_osd: dict[str, Any]) -> None:
        """Optimizer state dicts: ``osd`` (``optim.state_dict()``, keyed by parameter index) and
        ``dist_osd`` (keyed by parameter name, as ``get_optimizer_state_dict`` gives it) hold
        the same state per parameter and the same param groups (``dist_osd``'s groups may be
        split; they are compared merged). A mismatch names the parameter and the state."""
        test = self._checker()
        params = list(chain.from_iterable(group["params"] for group in optim.param_groups))
        index_of = {id(param): index for index, param in enumerate(params)}
        fqn_of: dict[int, str] = {index_of[id(p)]: fqn for fqn, p in model.named_parameters()
                                  if id(p) in index_of}
        test.assertEqual(len(osd[STATE]), len(dist_osd[STATE]), "numbers of parameter states")
        for index, states in osd[STATE].items():
            fqn = fqn_of[index]
            dist_states = dist_osd[STATE].get(fqn)
            test.assertIsNotNone(dist_states, f"no optimizer state for {fqn}")
            test.assertEqual(sorted(states), sorted(dist_states), f"state names of {fqn}")
            for key, state in states.items():
                dist_state = dist_states[key]
                if isinstance(state, torch.Tensor):
                    try:
                        self._compare_tensor(state, dist_state)
                    except AssertionError as error:
                        raise AssertionError(f"optimizer state {key!r} of {fqn} differs") from error
                else:
                    test.assertEqual(state, dist_state, f"optimizer state {key!r} of {fqn}")
        dist_groups = dist_osd[PARAM_GROUPS]
        if len(osd[PARAM_GROUPS]) != len(dist_groups):
            test.assertGreater(len(dist_groups), len(osd[PARAM_GROUPS]), "numbers of param groups")
            merged = copy.deepcopy(dist_groups[0])
            merged["params"] = [name for group in dist_groups for name in group["params"]]
            dist_groups = [merged]
        test.assertEqual(len(osd[PARAM_GROUPS]), len(dist_groups), "numbers of param groups")
        for group, dist_group in zip(osd[PARAM_GROUPS], dist_groups, strict=True):
            test.assertEqual(sorted(group), sorted(dist_group), "param group keys")
            for key, value in group.items():
                if key == "params":
                    test.assertEqual(sorted(fqn_of[i] for i in value), sorted(dist_group[key]),
                                     "the parameters of a param group")
                else:
                    test.assertEqual(value, dist_group[key], f"param group option {key!r}")

    def _verify_osd_by_load(self, model: nn.Module, optim: torch.optim.Optimizer,
                            new_optim: torch.optim.Optimizer, dist_osd: Mapping[str, Any]) -> None:
        """Loading ``dist_osd`` (gathered whole) into ``new_optim`` through ``set_state_dict``
        gives ``new_optim`` the state dict ``optim`` has."""
        test = self._checker()
        set_state_dict(model, optimizers=new_optim, model_state_dict={},
                       optim_state_dict=gathered_state_dict(dist_osd))
        test.assertEqual(optim.state_dict(), new_optim.state_dict())
