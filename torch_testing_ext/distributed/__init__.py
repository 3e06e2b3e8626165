"""Faces at the dotted paths of ``torch.testing._internal.distributed``, so that an upstream
import of ``torch.testing._internal.distributed.X`` becomes ``torch_testing_ext.distributed.X``.
Each is thin; the definitions live in our rooms.

- ``distributed_test``, ``ddp_under_dist_autograd_test``, ``nn.api.remote_module_test``, the RPC
  suites under ``rpc`` and ``rpc_utils``: torch's own suites, the installed torch's files run
  on our harness (by ``distributed_bases.shipped_suites``);
- ``fake_pg``: ``FakeStore`` (from ``process_groups``);
- ``checkpoint_utils``: ``with_temp_dir``, ``Rot13Example``, ``get_test_extension_registry``
  (from ``distributed_bases``);
- ``_tensor.common_dtensor``: the DTensor test bases, ``with_comms`` and the test models (from
  ``dtensor_bases``);
- ``common_state_dict``: ``VerifyStateDictMixin`` and the fusion-embedding models (from
  ``distributed_bases`` and ``models``);
- ``distributed_utils``: ``with_fake_comms``, ``with_dist``, ``MockProcessGroup`` & co (from
  ``distributed_bases``);
- ``rpc``: the RPC agents' test fixtures (from ``distributed_bases``) and the RPC suites;
- ``nn``: the remote-module suite;
- ``multi_threaded_pg``: ``ProcessLocalGroup``, ``ThreadLocalWorld``, ``_install_threaded_pg``,
  ``_uninstall_threaded_pg`` (from ``threads``).
"""
