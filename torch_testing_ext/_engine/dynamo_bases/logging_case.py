"""``LoggingTestCase``: a Dynamo test case for tests of torch's logging, named as in
``torch.testing._internal.logging_utils``.

For the whole class, Dynamo's errors are suppressed and its verbose mode off, and
``___LOG_TESTING`` is set (empty), as upstream. Tests find log records with
:meth:`LoggingTestCase.hasRecord` / :meth:`LoggingTestCase.getRecord`, or run code in a fresh
interpreter with ``TORCH_LOGS`` set (``run_process_no_exception``) and read its stderr.

Example::

    class TestLogs(LoggingTestCase):
        def test_dtensor_logs(self):
            env = dict(os.environ, TORCH_LOGS="+dtensor")
            _, stderr = self.run_process_no_exception("import torch", env=env)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from unittest import mock

from .._torch_private import patch_dynamo_config
from .dynamo_case import DynamoTestCase

__all__ = ["LoggingTestCase"]


class LoggingTestCase(DynamoTestCase):
    """A :class:`DynamoTestCase` with upstream's class-wide settings for logging tests.

    Upstream's ``_handler_watcher`` (patching the handlers of torch's registered loggers) and
    ``make_logging_test`` are not provided.
    """

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls._dynamo_config.enter_context(mock.patch.dict(os.environ, {"___LOG_TESTING": ""}))
        cls._dynamo_config.enter_context(patch_dynamo_config(suppress_errors=True, verbose=False))

    def hasRecord(self, records: Sequence[logging.LogRecord], m: str) -> bool:
        """Whether a record's message contains ``m``."""
        return any(m in record.getMessage() for record in records)

    def getRecord(self, records: Sequence[logging.LogRecord], m: str) -> logging.LogRecord:
        """The one record whose message contains ``m``; fails if none or several do."""
        matching = [record for record in records if m in record.getMessage()]
        if not matching:
            self.fail(f"did not find record with {m} among {list(records)}")
        if len(matching) > 1:
            self.fail(f"multiple matching records for {m}: {matching} among {list(records)}")
        return matching[0]
