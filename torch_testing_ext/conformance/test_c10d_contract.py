"""The conformance kit's tests: every item of the contract, on every world size asked for.

Run through ``python -m torch_testing_ext.conformance --backend NAME`` (a scored report), or
as pytest tests::

    pytest --c10d-backend gloo --pyargs torch_testing_ext.conformance

Each item is a test of its own on fresh ranks (``test_item[2ranks-p2p.send_recv]``); an item
the backend does not claim is skipped with the reason.
"""

import pytest

from torch_testing_ext._engine.conformance import pytest_kit

__all__: list[str] = []  # pytest's tests: nothing here is for importing


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    pytest_kit.parametrize(metafunc)


def test_item(c10d_item_id: str, rank: int, world_size: int, request: pytest.FixtureRequest) -> None:
    with pytest_kit.item_context(request.config, c10d_item_id, rank, world_size) as context:
        context.item.body(context)
