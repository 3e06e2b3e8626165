"""The preloaded fork server that rank processes are forked from.

Starting a rank must not cost an interpreter start plus ``import torch``. multiprocessing's
``forkserver`` start method runs one server process that imports a list of modules once;
each rank is then a ``fork()`` of it: fresh state for every test, at a fraction of a second.
The list here is torch, this package's rank code and the module that defines the test class;
when a later test class lives in another module (several files under pytest), the server is
restarted with that module preloaded.

The server must not initialise an accelerator (a forked child could not use it), so it gets
the device facts through the environment (``devices.export_facts``) and
``PYTORCH_NVML_BASED_CUDA_CHECK=1``. All temporary files of a test run live in one run
directory; the server removes it if the test process dies without doing so (``kill -9``).
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import os
import shutil
import tempfile
import threading

from .. import devices
from .._torch_private import PRELOADED_PRIVATE_MODULES, set_multiprocessing_tempdir, stop_forkserver

__all__ = ["forkserver_context", "run_directory"]

_RUN_DIR_ENV = "TORCH_TESTING_EXT_RUN_DIR"
_OWNER_PID_ENV = "TORCH_TESTING_EXT_OWNER_PID"
_BASE_PRELOAD = ("torch", "torch.distributed", *PRELOADED_PRIVATE_MODULES,
                 "torch_testing_ext.multiprocess.rank_process", __name__)

_lock = threading.RLock()
_run_dir: str | None = None
_preloaded: tuple[str, ...] | None = None


def _remove_run_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def run_directory() -> str:
    """This process's run directory (created on first use, removed at exit)."""
    global _run_dir
    with _lock:
        if _run_dir is None:
            _run_dir = tempfile.mkdtemp(prefix="torch_testing_ext-")
            atexit.register(_remove_run_dir, _run_dir)
        return _run_dir


def _start_server(preload: tuple[str, ...]) -> None:
    stop_forkserver()
    multiprocessing.set_forkserver_preload(list(preload))
    run_dir = run_directory()
    # The server takes its environment and temp dir from us at start; set them for it alone.
    saved = dict(os.environ)
    try:
        devices.export_facts()
        os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
        os.environ[_RUN_DIR_ENV] = run_dir
        os.environ[_OWNER_PID_ENV] = str(os.getpid())
        # Keep multiprocessing's own socket directory inside the run directory as well.
        set_multiprocessing_tempdir(tempfile.mkdtemp(prefix="mp-", dir=run_dir))
        multiprocessing.forkserver.ensure_running()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def forkserver_context(test_module: str) -> multiprocessing.context.BaseContext:
    """A forkserver context whose server has preloaded torch and ``test_module``."""
    global _preloaded
    wanted = (*_BASE_PRELOAD, "__main__" if test_module == "__main__" else test_module)
    with _lock:
        if wanted != _preloaded:
            _start_server(wanted)
            _preloaded = wanted
    return multiprocessing.get_context("forkserver")


def _clean_up_after_dead_owner() -> None:
    """Runs in the server: if the test process died first, remove its run directory."""
    run_dir = os.environ.get(_RUN_DIR_ENV)
    owner = os.environ.get(_OWNER_PID_ENV)
    if run_dir and owner and os.getppid() != int(owner):
        _remove_run_dir(run_dir)


if os.environ.get(_OWNER_PID_ENV) and os.environ.get(_OWNER_PID_ENV) != str(os.getpid()):
    # Imported by the fork server (preload): clean up if our owner is killed.
    atexit.register(_clean_up_after_dead_owner)
