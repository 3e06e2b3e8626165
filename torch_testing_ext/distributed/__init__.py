"""Faces at the dotted paths of ``torch.testing._internal.distributed``, so that an upstream
import of ``torch.testing._internal.distributed.X`` becomes ``torch_testing_ext.distributed.X``.
Each is thin; the definitions live in our rooms.

- ``distributed_test``: torch's own ``DistributedTest`` suite, the installed torch's file run on
  our harness (by ``distributed_bases.shipped_suites``);
- ``fake_pg``: ``FakeStore`` (from ``process_groups``);
- ``checkpoint_utils``: ``with_temp_dir``, ``Rot13Example``, ``get_test_extension_registry``
  (from ``distributed_bases``);
- ``_tensor.common_dtensor``: the DTensor test bases, ``with_comms`` and the test models (from
  ``dtensor_bases``);
- ``common_state_dict``: ``VerifyStateDictMixin`` and the fusion-embedding models (from
  ``distributed_bases`` and ``models``);
- ``distributed_utils``: ``with_fake_comms``, ``with_dist``, ``MockProcessGroup`` & co (from
  ``distributed_bases``);
- ``rpc_utils``: ``generate_tests`` and the suite lists, placeholders that skip (from
  ``distributed_bases``);
- ``rpc``: the RPC agents' test fixtures (from ``distributed_bases``);
- ``multi_threaded_pg``: ``ProcessLocalGroup``, ``ThreadLocalWorld``, ``_install_threaded_pg``,
  ``_uninstall_threaded_pg`` (from ``threads``).
"""
