"""The RPC agents' test fixtures: what an RPC test suite asks of the agent it runs on (world
size, init method, backend and its options, the errors to expect). Mixed into a suite by
``rpc_suites.generate_tests``.

- ``RpcAgentTestFixture``: 4 ranks meeting in the test's file (``tcp://MASTER_ADDR:MASTER_PORT``
  when ``RPC_INIT_WITH_TCP=1``); the agent-specific parts are abstract;
- ``TensorPipeRpcAgentTestFixture``: the TensorPipe agent with its default transports;
- ``FaultyRpcAgentTestFixture``: the faulty TensorPipe agent (fault injection), registered as
  torch's own fixture registers it (where this torch cannot, asking for it skips, naming why);
- ``dist_init``: the decorator of an RPC test method: RPC started on the fixture's agent as
  ``worker<rank>`` before the body, shut down after it.
"""

from __future__ import annotations

import abc
import functools
import os
import unittest
from collections.abc import Callable
from typing import Any

from .._torch_private import register_faulty_rpc_backend, report_rref_leaks
from ..skips.platform_skips import TEST_WITH_TSAN
from ..worlds import settings

__all__ = ["RpcAgentTestFixture", "TensorPipeRpcAgentTestFixture", "FaultyRpcAgentTestFixture",
           "retryable_message_types", "default_messages_to_delay", "FAULTY_BACKEND_SKIP_REASON", "dist_init"]

__unittest = True

FAULTY_BACKEND_SKIP_REASON = (
    "the FAULTY_TENSORPIPE RPC backend is not available: this torch cannot register it (its "
    "module torch.distributed.rpc._testing did not import)"
)

# Messages the faulty agent fails (and retries), and the seconds it delays messages by.
retryable_message_types = ["RREF_FORK_REQUEST", "RREF_CHILD_ACCEPT", "RREF_USER_DELETE",
                           "CLEANUP_AUTOGRAD_CONTEXT_REQ"]
default_messages_to_delay = {"PYTHON_CALL": 1.5, "SCRIPT_CALL": 1.5}


class RpcAgentTestFixture(abc.ABC):
    """What every RPC agent's fixture answers; ``file_name`` comes from the test case."""

    file_name: str

    @property
    def world_size(self) -> int:
        return 4

    @property
    def init_method(self) -> str:
        """TCP on ``MASTER_ADDR``/``MASTER_PORT`` with ``RPC_INIT_WITH_TCP=1``, else the file."""
        if os.environ.get("RPC_INIT_WITH_TCP") == "1":
            return f"tcp://{settings.MASTER_ADDR.get()}:{settings.MASTER_PORT.get()}"
        return self.file_init_method

    @property
    def file_init_method(self) -> str:
        return f"file://{self.file_name}"

    @property
    @abc.abstractmethod
    def rpc_backend(self) -> Any:
        """The agent's ``torch.distributed.rpc.BackendType``."""

    @property
    @abc.abstractmethod
    def rpc_backend_options(self) -> Any:
        """The options ``rpc.init_rpc`` gets for this agent."""

    def setup_fault_injection(self, faulty_messages: Any, messages_to_delay: Any) -> None:  # noqa: B027
        """Prepare fault injection (only the faulty agent does anything)."""

    @abc.abstractmethod
    def get_shutdown_error_regex(self) -> str:
        """A regex of the errors a peer's shutdown may raise."""

    @abc.abstractmethod
    def get_timeout_error_regex(self) -> str:
        """A regex (a part of the message) of an RPC timeout's error."""


class TensorPipeRpcAgentTestFixture(RpcAgentTestFixture):
    """The TensorPipe agent (its default transports)."""

    @property
    def rpc_backend(self) -> Any:
        import torch.distributed.rpc as rpc

        # The registry's enum: registering a backend (the faulty one) replaces it, and init_rpc
        # checks against the registry's, not the older one rpc's namespace still holds.
        return rpc.backend_registry.BackendType["TENSORPIPE"]

    @property
    def rpc_backend_options(self) -> Any:
        import torch.distributed.rpc as rpc

        return rpc.TensorPipeRpcBackendOptions(init_method=self.init_method)

    def get_shutdown_error_regex(self) -> str:
        return "(.*)"  # TensorPipe's shutdown errors vary

    def get_timeout_error_regex(self) -> str:
        return "RPC ran for more than"


class FaultyRpcAgentTestFixture(RpcAgentTestFixture):
    """The faulty TensorPipe agent: fails ``messages_to_fail`` (3 sends each) and delays
    ``messages_to_delay``; 8 worker threads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.messages_to_fail: list[str] = list(retryable_message_types)
        self.messages_to_delay: dict[str, float] = dict(default_messages_to_delay)

    @property
    def rpc_backend(self) -> Any:
        import torch.distributed.rpc as rpc

        try:
            register_faulty_rpc_backend()
            return rpc.backend_registry.BackendType["FAULTY_TENSORPIPE"]
        except (ImportError, KeyError):
            raise unittest.SkipTest(FAULTY_BACKEND_SKIP_REASON) from None

    @property
    def rpc_backend_options(self) -> Any:
        import torch.distributed.rpc as rpc

        return rpc.backend_registry.construct_rpc_backend_options(
            self.rpc_backend, init_method=self.init_method, num_worker_threads=8,
            num_fail_sends=3, messages_to_fail=self.messages_to_fail,
            messages_to_delay=self.messages_to_delay)

    def setup_fault_injection(self, faulty_messages: Any, messages_to_delay: Any) -> None:
        if faulty_messages is not None:
            self.messages_to_fail = faulty_messages
        if messages_to_delay is not None:
            self.messages_to_delay = messages_to_delay

    def get_shutdown_error_regex(self) -> str:
        return "|".join(f"({text})" for text in ("Exception in thread pool task",
                                                  "Connection reset by peer",
                                                  "Connection closed by peer"))

    def get_timeout_error_regex(self) -> str:
        return "RPC ran for more than"


def dist_init(
    old_test_method: Callable[..., Any] | None = None,
    setup_rpc: bool = True,
    clean_shutdown: bool = True,
    faulty_messages: list[str] | None = None,
    messages_to_delay: dict[str, float] | None = None,
) -> Any:
    """Run an RPC test method (of a fixture mixed into a ``MultiProcessTestCase``) with RPC up.

    In each rank: leaked RRefs made an error, ``self.worker_id`` set to the rank, the fault
    injection set up (``faulty_messages``, ``messages_to_delay``: the faulty agent's), and unless
    ``setup_rpc=False`` RPC started as ``worker<rank>`` on the fixture's ``rpc_backend`` and
    ``rpc_backend_options`` (timeouts five times longer under TSAN). After the body returns RPC
    is shut down, gracefully unless ``clean_shutdown=False``; a body that raises leaves RPC to
    the rank's end. Written ``@dist_init`` or ``@dist_init(clean_shutdown=False)``.
    """
    if old_test_method is None:
        return functools.partial(dist_init, setup_rpc=setup_rpc, clean_shutdown=clean_shutdown,
                                 faulty_messages=faulty_messages, messages_to_delay=messages_to_delay)

    @functools.wraps(old_test_method)
    def new_test_method(self: Any, *args: Any, **kwargs: Any) -> Any:
        import torch.distributed.rpc as rpc

        report_rref_leaks()
        self.worker_id = self.rank
        self.setup_fault_injection(faulty_messages, messages_to_delay)
        options = self.rpc_backend_options
        if setup_rpc:
            if TEST_WITH_TSAN:
                options.rpc_timeout = rpc.constants.DEFAULT_RPC_TIMEOUT_SEC * 5
            rpc.init_rpc(name=f"worker{self.rank:d}", backend=self.rpc_backend, rank=self.rank,
                         world_size=self.world_size, rpc_backend_options=options)
        result = old_test_method(self, *args, **kwargs)
        if setup_rpc:
            rpc.shutdown(graceful=clean_shutdown)
        return result

    return new_test_method
