"""torch_testing_ext: a public, version-stable harness for PyTorch distributed tests.

Public modules mirror ``torch.testing._internal`` (``common_utils``, ``common_distributed``,
``common_cuda``, ``inductor_utils``, ``triton_utils``) so that an upstream test moves here by
rewriting its imports; ``devices`` holds the machine facts and ``fake_ddp`` the
single-process DDPOptimizer helpers.
"""

__version__ = "0.1.0"
