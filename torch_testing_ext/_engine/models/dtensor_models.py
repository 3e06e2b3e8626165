"""The small models DTensor tests parallelize: an MLP, a stack of them, an RMSNorm and a toy
transformer (with optional experts).

Constructor signatures, submodule and parameter names and shapes are upstream's, since tests
address parameters by name (``"net1.weight"``, ``"layers.0.attention.wq"``...)::

    model = Transformer(ModelArgs(n_layers=2, dim=16, n_heads=4, vocab_size=8))
    Transformer.parallelize(model, tp_mesh, use_seq_parallel=False)
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor
from torch.utils.checkpoint import checkpoint

from .transformer_parallel import parallelize_transformer

__all__ = ["RMSNormPython", "MLPModule", "MLPStacked", "ModelArgs", "Attention", "FeedForward",
           "Experts", "ExpertLayer", "TransformerBlock", "Transformer"]

__unittest = True


class RMSNormPython(nn.Module):
    """Root-mean-square normalisation over the last dimension, with a learned ``weight``."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inverse_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * inverse_rms * self.weight


class MLPModule(nn.Module):
    """``net1`` (10 -> 16), ReLU, ``net2`` (16 -> 10); its weights are seeded (seed 5), so every
    rank builds the same model."""

    def __init__(self, device: torch.device | str | None, bias: bool = True) -> None:
        super().__init__()
        torch.manual_seed(5)
        self.net1 = nn.Linear(10, 16, bias=bias, device=device)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(16, 10, bias=bias, device=device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net2(self.relu(self.net1(x)))

    def reset_parameters(self) -> None:
        for linear in (self.net1, self.net2):
            linear.reset_parameters()


class MLPStacked(nn.Module):
    """``n_layers`` :class:`MLPModule` in ``layers``, applied in turn."""

    def __init__(self, device: torch.device | str | None, n_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(MLPModule(device) for _ in range(n_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


@dataclasses.dataclass
class ModelArgs:
    """The toy transformer's sizes and switches."""

    n_layers: int = 2
    vocab_size: int = 8
    max_seq_len: int = 16
    dim: int = 16
    n_heads: int = 4
    dropout_p: float = 0.1
    use_attn_mask: bool = True
    weight_tying: bool = True
    checkpoint_activations: bool = False
    num_experts: int = 0


class Attention(nn.Module):
    """Multi-head self-attention (``wq``, ``wk``, ``wv``, ``wo``, no biases), causal when
    ``use_attn_mask``."""

    wq: nn.Linear
    wk: nn.Linear
    wv: nn.Linear
    wo: nn.Linear

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        if args.dim % args.n_heads:
            raise ValueError(f"ModelArgs.dim={args.dim} is not a multiple of n_heads={args.n_heads}")
        self.head_dim = args.dim // args.n_heads
        self.n_heads = args.n_heads
        self.dropout_p = args.dropout_p
        self.resid_dropout = nn.Dropout(args.dropout_p)
        self.use_attn_mask = args.use_attn_mask
        for name in ("wq", "wk", "wv", "wo"):
            setattr(self, name, nn.Linear(args.dim, args.dim, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq_len, _ = x.size()

        def heads(projection: nn.Module) -> torch.Tensor:  # (batch, heads, seq, head_dim)
            return projection(x).view(batch, seq_len, self.n_heads, self.head_dim).transpose(1, 2)

        attended = F.scaled_dot_product_attention(
            heads(self.wq), heads(self.wk), heads(self.wv), None,
            self.dropout_p if self.training else 0, self.use_attn_mask)
        return self.resid_dropout(self.wo(attended.transpose(1, 2).reshape(batch, seq_len, -1)))


class FeedForward(nn.Module):
    """``w1``, GELU, ``w2``, dropout."""

    def __init__(self, dim: int, hidden_dim: int, dropout_p: float) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim)
        self.gelu = nn.GELU()
        self.w2 = nn.Linear(hidden_dim, dim)
        self.resid_dropout = nn.Dropout(dropout_p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.resid_dropout(self.w2(self.gelu(self.w1(x))))


class Experts(nn.Module):
    """``num_experts`` two-layer GELU MLPs as batched weights ``w1`` (E, hidden, dim) and ``w2``
    (E, dim, hidden); every token goes through every expert and the outputs are summed."""

    def __init__(self, dim: int, hidden_dim: int, num_experts: int) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.w1 = nn.Parameter(torch.empty(num_experts, hidden_dim, dim))
        self.w2 = nn.Parameter(torch.empty(num_experts, dim, hidden_dim))
        self.reset_parameters()
        self.gelu = nn.GELU()

    def reset_parameters(self) -> None:
        for weight in (self.w1, self.w2):
            nn.init.normal_(weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Sharded weights are DTensors while tokens arrive as plain tensors: use the shards.
        w1, w2 = ((w.to_local() if isinstance(w, DTensor) else w) for w in (self.w1, self.w2))
        tokens = x.unsqueeze(0).expand(w1.shape[0], -1, -1)
        hidden = self.gelu(torch.bmm(tokens, w1.transpose(-2, -1)))
        return torch.bmm(hidden, w2.transpose(-2, -1)).sum(dim=0)


class ExpertLayer(nn.Module):
    """:class:`Experts` over the flattened tokens, averaged over the experts."""

    def __init__(self, num_experts: int, dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.experts = Experts(dim=dim, hidden_dim=hidden_dim, num_experts=num_experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq_len, dim = x.shape
        out = self.experts(x.view(-1, dim)) / self.num_experts
        return out.view(batch, seq_len, dim)


class TransformerBlock(nn.Module):
    """Pre-norm attention and feed-forward (or experts when ``num_experts > 0``), each residual."""

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(args.dim)
        self.attention = Attention(args)
        self.ffn_norm = nn.LayerNorm(args.dim)
        self.has_experts = args.num_experts > 0
        if self.has_experts:
            self.expert_layer = ExpertLayer(args.num_experts, dim=args.dim, hidden_dim=4 * args.dim)
        else:
            self.feed_forward = FeedForward(args.dim, hidden_dim=4 * args.dim,
                                            dropout_p=args.dropout_p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.attention_norm(x))
        mlp = self.expert_layer if self.has_experts else self.feed_forward
        return h + mlp(self.ffn_norm(h))


class Transformer(nn.Module):
    """A toy GPT: token and position embeddings, ``n_layers`` blocks, a final norm and an output
    projection (tied to the token embedding when ``weight_tying``)."""

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        if args.vocab_size is None or args.max_seq_len is None:
            raise ValueError("ModelArgs.vocab_size and ModelArgs.max_seq_len must be set")
        self.model_args = args
        self.max_seq_len = args.max_seq_len
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.pos_embeddings = nn.Embedding(args.max_seq_len, args.dim)
        self.dropout = nn.Dropout(args.dropout_p)
        self.layers = nn.ModuleList(TransformerBlock(args) for _ in range(args.n_layers))
        self.norm = nn.LayerNorm(args.dim)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        if args.weight_tying:
            self.output.weight = self.tok_embeddings.weight
        self.checkpoint_activations = args.checkpoint_activations

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq_len = tokens.size(1)
        if seq_len > self.max_seq_len:
            raise ValueError(f"sequence of {seq_len} tokens is longer than max_seq_len="
                             f"{self.max_seq_len}")
        positions = torch.arange(0, seq_len, device=tokens.device)
        h = self.dropout(self.tok_embeddings(tokens) + self.pos_embeddings(positions))
        for layer in self.layers:
            h = checkpoint(layer, h, use_reentrant=False) if self.checkpoint_activations else layer(h)
        return self.output(self.norm(h)).float()

    @staticmethod
    def parallelize(module: Transformer, tp_mesh: DeviceMesh | None, use_seq_parallel: bool,
                    local_output_for_attn: bool = False,
                    ep_mesh: DeviceMesh | None = None) -> nn.Module:
        """Tensor-parallelize ``module`` on ``tp_mesh`` (sequence-parallel norms with
        ``use_seq_parallel``) and/or expert-parallelize its experts on ``ep_mesh``."""
        if not isinstance(module, Transformer):
            raise TypeError(f"Transformer.parallelize needs a Transformer, not {type(module).__name__}")
        return parallelize_transformer(module, tp_mesh, use_seq_parallel, local_output_for_attn,
                                       ep_mesh)
