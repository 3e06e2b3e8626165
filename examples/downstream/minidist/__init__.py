"""minidist: the few collective helpers a small training loop needs (an example library)."""

from .collectives import average_gradients, chunk_sizes, global_mean, shard_rows

__all__ = ["average_gradients", "chunk_sizes", "global_mean", "shard_rows"]
