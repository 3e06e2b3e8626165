"""The conformance kit for c10d backends (ours, not an upstream path).

::

    python -m torch_testing_ext.conformance --backend gloo --world-sizes 2,3 --report gloo.md
    python -m torch_testing_ext.conformance --backend mybackend --import my_backend_module
    pytest --c10d-backend gloo --pyargs torch_testing_ext.conformance

Contract suites written over the public c10d API (collectives, point-to-point, object
collectives, groups, async work, coalescing, functional collectives, DTensor, layouts, timeouts,
errors), checked against what the backend claims (a manifest): what is claimed must pass, what
is not is listed as not claimed. Every item runs on a fresh world with a timeout of its own; the
scored report (Markdown or JSON) carries :data:`KIT_VERSION`. See docs/conformance.md.

- ``__main__``: the ``python -m`` entry point;
- ``test_c10d_contract``: the kit's pytest tests (``--pyargs torch_testing_ext.conformance``).
"""

from .._engine.conformance.contract import ContractFailure
from .._engine.conformance.vocabulary import AREAS, KIT_VERSION

__all__ = ["KIT_VERSION", "AREAS", "ContractFailure"]
