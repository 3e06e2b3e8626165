"""Inductor's on-disk cache: a directory of the test process, removed when it exits.

torch keeps inductor's cache (and, below it, triton's) in ``$TORCHINDUCTOR_CACHE_DIR``, by
default ``$TMPDIR/torchinductor_<user>``, which importing ``torch._dynamo`` or
``torch._inductor`` creates: every test run left it behind, empty. So, unless the user set the
variable, the test process sets it, as the harness is imported (before a test can import
inductor), to a directory of its own in ``$TMPDIR``, created by inductor when first used and
removed at the process's exit (after the fork server, which inherits the variable with the
ranks, has stopped). A user's own cache directory is never touched.

When inductor came first (a test file that imports ``torch._dynamo`` before the harness),
torch has already made its default directory. If that directory holds no file yet, it is
removed at exit if it still holds none; a cache with something in it is left alone.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile

from .._torch_private import call_after_multiprocessing_exit

__all__ = ["CACHE_DIR_ENV", "keep_inductor_cache_private"]

CACHE_DIR_ENV = "TORCHINDUCTOR_CACHE_DIR"
_TORCH_DEFAULT_PREFIX = "torchinductor_"  # torch's default: <tempdir>/torchinductor_<user>

_owner_pid: int | None = None  # the process that chose the directory (None: not yet)


def _holds_no_file(path: str) -> bool:
    return all(not files for _, _, files in os.walk(path))


def _remove_empty_tree(path: str) -> None:
    """Remove ``path`` and the directories below it, if none of them holds a file."""
    if os.path.isdir(path) and _holds_no_file(path):
        shutil.rmtree(path, ignore_errors=True)


def _is_torch_default(path: str) -> bool:
    """``path`` is torch's default cache directory, ``<tempdir>/torchinductor_<user>``."""
    path = os.path.abspath(path)
    return (os.path.dirname(path) == os.path.abspath(tempfile.gettempdir())
            and os.path.basename(path).startswith(_TORCH_DEFAULT_PREFIX))


def _clean_up(path: str, private: bool) -> None:
    if os.getpid() != _owner_pid:  # a process forked from this one owns nothing here
        return
    if private:
        shutil.rmtree(path, ignore_errors=True)
    else:
        _remove_empty_tree(path)


def keep_inductor_cache_private() -> None:
    """Unless ``TORCHINDUCTOR_CACHE_DIR`` is set, set it to a directory of this process that is
    removed at its exit; if it is torch's default directory, made by this process's import of
    inductor and holding no file, remove that at exit if it still holds none. Once per process."""
    global _owner_pid
    if _owner_pid == os.getpid():
        return
    _owner_pid = os.getpid()
    chosen = os.environ.get(CACHE_DIR_ENV)
    if chosen is None:
        path = os.path.join(tempfile.gettempdir(),
                            f"torch_testing_ext-inductor-{os.getpid()}-{secrets.token_hex(4)}")
        os.environ[CACHE_DIR_ENV] = path  # inductor makes it when it first needs it
        call_after_multiprocessing_exit(lambda: _clean_up(path, private=True))
    elif _is_torch_default(chosen) and os.path.isdir(chosen) and _holds_no_file(chosen):
        call_after_multiprocessing_exit(lambda: _clean_up(chosen, private=False))
