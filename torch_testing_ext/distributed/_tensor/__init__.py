"""Faces at ``torch.testing._internal.distributed._tensor``.

- ``common_dtensor``: the DTensor test bases, ``with_comms``, the test models and helpers
  (from ``dtensor_bases``).
"""
