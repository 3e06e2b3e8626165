"""Dynamo test cases: a clean Dynamo per test, with or without a process group.

- ``dynamo_case``: ``DynamoTestCase`` and ``reset_dynamo`` (a clean Dynamo around each test);
- ``dynamo_distributed_cases``: Dynamo with a real world-size-1 group, or on N ranks;
- ``logging_case``: ``LoggingTestCase``, for tests of torch's logging;
- ``per_rank_init``: ``dynamo_dist_per_rank_init``, one rank's set-up for a Dynamo test body.
"""
