"""Model sizes for tests that build Hugging Face models from a config (nothing is downloaded).

Upstream distributed tests train a ``BertConfig()``-sized BERT (12 layers, hidden 768) on
batches of 4 sequences of 512 tokens. On an accelerator that is quick; on a 2-core CPU every
such test would take minutes, most of it Inductor compiling twelve identical layers. So the
size is chosen from the device facts: the upstream size wherever an accelerator exists, and a
smaller BERT of the same architecture on a CPU-only machine (fewer and narrower layers,
shorter sequences; same vocabulary, so the embedding/decoder weights still span several
DDP buckets and DDPOptimizer still splits the graph).

Setting ``TORCH_TESTING_EXT_HF_BERT=upstream`` forces the upstream size everywhere (and
``=cpu`` the small one).

Example::

    size = hf_bert_size()
    model = AutoModelForMaskedLM.from_config(hf_bert_config())
    input_ids = torch.randint(0, model.config.vocab_size, (size.batch_size, size.seq_len))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from . import devices
from ._engine.worlds import settings

__all__ = ["HFBertSize", "UPSTREAM_HF_BERT", "CPU_HF_BERT", "HF_BERT_ENV", "hf_bert_size",
           "hf_bert_config"]

HF_BERT_ENV = settings.HF_BERT.name


@dataclasses.dataclass(frozen=True)
class HFBertSize:
    """A BERT test size: the input batch shape and ``BertConfig`` keyword arguments
    (empty means ``BertConfig()`` defaults)."""

    name: str
    batch_size: int
    seq_len: int
    config_kwargs: Mapping[str, Any]


UPSTREAM_HF_BERT = HFBertSize("upstream", batch_size=4, seq_len=512,
                              config_kwargs=MappingProxyType({}))
CPU_HF_BERT = HFBertSize("cpu", batch_size=4, seq_len=128, config_kwargs=MappingProxyType({
    "num_hidden_layers": 2,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "intermediate_size": 1024,
}))
_SIZES = {size.name: size for size in (UPSTREAM_HF_BERT, CPU_HF_BERT)}


def hf_bert_size() -> HFBertSize:
    """The BERT size for this machine: upstream with an accelerator, small on a CPU-only one."""
    forced = settings.HF_BERT.get()
    if forced:
        return _SIZES[forced]
    return UPSTREAM_HF_BERT if devices.accelerator_type() else CPU_HF_BERT


def hf_bert_config() -> Any:
    """A ``transformers.BertConfig`` of :func:`hf_bert_size` (raises ImportError without
    transformers)."""
    from transformers import BertConfig

    return BertConfig(**hf_bert_size().config_kwargs)
