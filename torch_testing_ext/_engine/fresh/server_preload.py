"""The fork server's last preload: the test process's main script, and warm compiler caches.

Imported in the fork server after torch, so that every rank forked from it finds this work
done instead of repeating it for every test:

- under ``python test_x.py`` the test classes live in the script, which multiprocessing would
  import again in every rank (its own ``"__main__"`` preload does not work on CPython 3.11);
  the server imports it once, as multiprocessing would in a child (``__mp_main__``);
- a class that compiles with inductor (``warm_inductor_in_server = True``) has the server
  import the compiler and fill its per-process caches;
- ranks that run a pytest session (``@pytest.mark.world_size`` tests) have the server run one
  that collects nothing, with the test process's plugin options: pytest's plugins, and what
  they import late (a plugin's terminal summary may import a whole library), are loaded once
  here instead of in every rank.

The fork server passes both wishes through its environment (see ``fork_server``). If the
script fails to import here, the server carries on without it: each rank imports it again and
reports the error where the test can show it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import traceback
from collections.abc import Iterator

from .._torch_private import import_main_script, warm_inductor_process_caches
from .fork_server import MAIN_SCRIPT_ENV, WARM_INDUCTOR_ENV, WARM_PYTEST_ENV, serving

__all__: list[str] = []


def _preload() -> None:
    script = os.environ.get(MAIN_SCRIPT_ENV)
    if script:
        try:
            import_main_script(script)
        except SystemExit:  # a script that exits as it is imported: each rank meets it again
            pass
        except Exception:  # shown once here; each rank imports the script again and reports it
            traceback.print_exc()
    if os.environ.get(WARM_INDUCTOR_ENV) == "1":
        try:
            warm_inductor_process_caches()
        except Exception:  # a rank that compiles meets the same error in its test
            traceback.print_exc()


@contextlib.contextmanager
def _output_discarded() -> Iterator[None]:
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def _warm_pytest(options: list[str]) -> None:
    """Run a pytest session over an empty directory with ``options``, its output discarded."""
    import pytest

    with tempfile.TemporaryDirectory(prefix="torch_testing_ext-warm-") as empty, _output_discarded():
        pytest.main([*options, "-q", "-p", "no:cacheprovider", empty])


if serving():
    _preload()
    _warm = os.environ.get(WARM_PYTEST_ENV)
    if _warm:
        try:
            _warm_pytest(json.loads(_warm))
        except BaseException:  # each rank's own session meets the same problem and reports it
            traceback.print_exc()
