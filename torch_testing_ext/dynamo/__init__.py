"""Test cases for code compiled with ``torch.compile``, alone or with process groups.

- ``dynamo_case``: ``DynamoTestCase`` and ``reset_dynamo`` (a clean Dynamo around each test);
- ``dynamo_distributed_cases``: Dynamo with a real world-size-1 group, or on N ranks;
- ``per_rank_init``: ``dynamo_dist_per_rank_init``, one rank's set-up for a Dynamo test body;
- ``logging_case``: ``LoggingTestCase``, for tests of torch's logging.
"""
