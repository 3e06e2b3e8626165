"""The machinery behind MultiProcessTestCase: fork server, rank runner, outcomes, supervisor."""
