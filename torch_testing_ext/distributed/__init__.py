"""Faces at the dotted paths of ``torch.testing._internal.distributed``, so that an upstream
import of ``torch.testing._internal.distributed.X`` becomes ``torch_testing_ext.distributed.X``.
Each is thin; the definitions live in our rooms.

- ``fake_pg``: ``FakeStore`` (from ``process_groups``);
- ``checkpoint_utils``: ``with_temp_dir`` (from ``distributed_cases``).
"""
