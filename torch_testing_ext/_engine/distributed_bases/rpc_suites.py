"""The RPC test suites' names, as placeholders that skip: this package does not provide
PyTorch's RPC test suites.

Upstream's ``rpc_utils`` lists the suites (``RpcTest``, ``DistAutogradTest``...; about 10,000
lines of tests in ``torch.testing._internal.distributed.rpc``, ``nn.api`` and
``ddp_under_dist_autograd_test``) and ``generate_tests`` mixes each with an agent's fixture
into a test class. Here each listed name is a ``TestCase`` with one test,
``test_rpc_suite_not_provided``, that skips saying which suite is missing, so an upstream RPC
test file imports, runs and reports a skip per suite instead of failing to import.

Example::

    globals().update(generate_tests("TensorPipe", Fixture, GENERIC_TESTS, __name__))
    # -> TensorPipeRpcTest.test_rpc_suite_not_provided ... skipped '...'
"""

from __future__ import annotations

import unittest
from typing import Any

from ..testcase.tensor_testcase import TestCase

__all__ = ["RpcSuitePlaceholder", "GENERIC_TESTS", "GENERIC_CUDA_TESTS", "GENERIC_DEVICE_TESTS",
           "TENSORPIPE_TESTS", "TENSORPIPE_CUDA_TESTS", "TENSORPIPE_DEVICE_TESTS", "FAULTY_AGENT_TESTS",
           "generate_tests", "missing_suite_reason"]

__unittest = True


def missing_suite_reason(suite: str, module: str) -> str:
    """The skip reason of a placeholder suite."""
    return (f"the RPC test suite {suite} (upstream torch.testing._internal.distributed.{module}) "
            "is not provided by torch_testing_ext")


class RpcSuitePlaceholder(TestCase):
    """A placeholder for one upstream RPC suite (``suite_module`` names where it lives)."""

    suite_module = ""

    @classmethod
    def suite_name(cls) -> str:
        """The upstream suite's name (the first placeholder in the class's ancestry)."""
        for klass in cls.__mro__:
            if RpcSuitePlaceholder in klass.__bases__:
                return klass.__name__
        return cls.__name__

    def test_rpc_suite_not_provided(self) -> None:
        raise unittest.SkipTest(missing_suite_reason(self.suite_name(), self.suite_module))


def _placeholder(name: str, module: str) -> type[RpcSuitePlaceholder]:
    return type(name, (RpcSuitePlaceholder,), {"suite_module": module, "__module__": __name__,
                                                "__qualname__": name,
                                                "__doc__": f"Placeholder for {module}.{name}."})


def _placeholders(**suites: str) -> list[type[RpcSuitePlaceholder]]:
    return [_placeholder(name, module) for name, module in suites.items()]


# Module paths under torch.testing._internal.distributed, as upstream's rpc_utils imports them.
_RPC, _AUTOGRAD = "rpc.rpc_test", "rpc.dist_autograd_test"
_REMOTE, _DDP = "nn.api.remote_module_test", "ddp_under_dist_autograd_test"

GENERIC_TESTS = _placeholders(
    RpcTest=_RPC, ParameterServerTest="rpc.examples.parameter_server_test",
    DistAutogradTest=_AUTOGRAD, DistOptimizerTest="rpc.dist_optimizer_test",
    JitRpcTest="rpc.jit.rpc_test", JitDistAutogradTest="rpc.jit.dist_autograd_test",
    RemoteModuleTest=_REMOTE, ThreeWorkersRemoteModuleTest=_REMOTE,
    DdpUnderDistAutogradTest=_DDP, DdpComparisonTest=_DDP,
    ReinforcementLearningRpcTest="rpc.examples.reinforcement_learning_rpc_test")
GENERIC_CUDA_TESTS = _placeholders(
    CudaRpcTest=_RPC, CudaDistAutogradTest=_AUTOGRAD, CudaRemoteModuleTest=_REMOTE,
    CudaDdpComparisonTest=_DDP)
TENSORPIPE_TESTS = _placeholders(
    TensorPipeAgentRpcTest=_RPC, TensorPipeAgentDistAutogradTest=_AUTOGRAD)
TENSORPIPE_CUDA_TESTS = _placeholders(
    TensorPipeAgentCudaRpcTest=_RPC, TensorPipeCudaDistAutogradTest=_AUTOGRAD)
# The accelerator suites under upstream's device-generic names (the CUDA lists' suites, which
# run on any accelerator upstream: CUDA and XPU files generate them).
GENERIC_DEVICE_TESTS = list(GENERIC_CUDA_TESTS)
TENSORPIPE_DEVICE_TESTS = list(TENSORPIPE_CUDA_TESTS)
FAULTY_AGENT_TESTS = _placeholders(
    FaultyAgentRpcTest="rpc.faulty_agent_rpc_test", FaultyAgentDistAutogradTest=_AUTOGRAD,
    JitFaultyAgentRpcTest="rpc.jit.rpc_test_faulty")


def generate_tests(prefix: str, mixin: type, tests: list[type[Any]],
                   module_name: str) -> dict[str, type[Any]]:
    """``{prefix + suite name: class}`` for each suite in ``tests``, each class the suite with
    ``mixin`` (the agent's fixture) mixed in and placed in ``module_name`` (put them in the
    calling module's globals). A placeholder suite's class skips with its reason."""
    generated: dict[str, type[Any]] = {}
    for suite in tests:
        name = f"{prefix}{suite.__name__}"
        bases = (suite,) if issubclass(suite, mixin) else (suite, mixin)
        generated[name] = type(name, bases, {"__module__": module_name, "__qualname__": name})
    return generated
