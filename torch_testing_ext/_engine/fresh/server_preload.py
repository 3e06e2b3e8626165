"""The fork server's last preload: the test process's main script, and warm compiler caches.

Imported in the fork server after torch, so that every rank forked from it finds this work
done instead of repeating it for every test:

- under ``python test_x.py`` the test classes live in the script, which multiprocessing would
  import again in every rank (its own ``"__main__"`` preload does not work on CPython 3.11);
  the server imports it once, as multiprocessing would in a child (``__mp_main__``);
- a class that compiles with inductor (``warm_inductor_in_server = True``) has the server
  import the compiler and fill its per-process caches;
- a caller that asks for a warm-up call (``fork_server.WarmUp``) has the server make it: the
  pytest ranks, for one, have it run a pytest session that loads their plugins once.

The fork server passes these wishes through its environment (see ``fork_server``). If the
script fails to import here, the server carries on without it: each rank imports it again and
reports the error where the test can show it.
"""

from __future__ import annotations

import importlib
import json
import os
import traceback

from .._torch_private import import_main_script, warm_inductor_process_caches
from .fork_server import MAIN_SCRIPT_ENV, WARM_INDUCTOR_ENV, WARM_UP_ENV, serving

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




def _warm_up(encoded: str) -> None:
    """Make the warm-up call ``fork_server.WarmUp`` encoded as JSON ``[module, function, arguments]``."""
    module, function, arguments = json.loads(encoded)
    getattr(importlib.import_module(module), function)(*arguments)


if serving():
    _preload()
    _warm = os.environ.get(WARM_UP_ENV)
    if _warm:
        try:
            _warm_up(_warm)
        except BaseException:  # each rank meets the same problem where its test can report it
            traceback.print_exc()
