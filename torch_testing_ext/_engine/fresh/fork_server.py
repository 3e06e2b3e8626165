"""The preloaded fork server that rank processes are forked from.

Starting a rank must not cost an interpreter start plus ``import torch``. multiprocessing's
``forkserver`` start method runs one server process that imports a list of modules once;
each rank is then a ``fork()`` of it: fresh state for every test, at a fraction of a second.
The server is our own (``_torch_private.forkserver_context_of``), not the one multiprocessing
shares with every library in the process: another library's forkserver use, its ``os.wait``
that reaps our server, a killed server or a closed pipe never leaves us without one; before
each test a server that is gone or cannot be reached is replaced (:func:`server_alive`).
The list here is torch, this package's rank code and the module that defines the test class
(the script itself under ``python test_x.py``, see ``server_preload``), and for classes that
ask for it inductor's compiler; when a later test class lives in another module (several
files under pytest) or asks for other preloads, the server is restarted with those.

The server must not initialise an accelerator (a forked child could not use it), so it gets
the device facts through the environment (``devices.export_facts``) and
``PYTORCH_NVML_BASED_CUDA_CHECK=1``. All temporary files of a test run live in one run
directory; the server removes it if the test process dies without doing so (``kill -9``).
Multiprocessing's socket lives there too, unless TMPDIR is so long that the socket's path
would not fit an ``AF_UNIX`` address (108 bytes): then it gets a directory of its own in
``/tmp``, removed in the same way.

Nothing outlives the test process. At its exit the test process stops the server and waits
for it. The server is a child subreaper, so whatever a rank leaves behind, even in a session
of its own, stays in the server's process tree (the supervisor finds it there after each
test). When the server stops, or sees its owner die, it kills every process below it, reaps
them all and leaves at once, without the seconds of interpreter teardown that torch costs.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable

from ... import devices
from .._torch_private import (
    PRELOADED_PRIVATE_MODULES,
    call_after_multiprocessing_exit,
    forget_forkserver,
    forkserver_context_of,
    forkserver_process,
    main_script_path,
    multiprocessing_tempdir,
    run_multiprocessing_finalizers,
    stop_resource_tracker,
)
from ..process_tree.linux_prctl import become_subreaper, set_parent_death_signal
from ..process_tree.proc_table import descendants, is_exiting, signal_all

__all__ = ["WarmUp", "forkserver_context", "run_directory", "server_pid", "server_alive", "stop_server",
           "adopt_environment", "reread_after_adopting", "serving"]

SERVER_REAP_WAIT = 2.0  # seconds the exiting server waits for the processes it killed

_RUN_DIR_ENV = "TORCH_TESTING_EXT_RUN_DIR"
_SOCKET_DIR_ENV = "TORCH_TESTING_EXT_SOCKET_DIR"
_OWNER_PID_ENV = "TORCH_TESTING_EXT_OWNER_PID"
# The test process's sys.path: CPython 3.11's fork server is handed it but does not use it
# before its preloads, so a test module found through a path pytest inserted (or any
# sys.path change) would not be preloaded, and every rank would import it again.
_SYS_PATH_ENV = "TORCH_TESTING_EXT_SYS_PATH"
# multiprocessing names its sockets "<dir>/listener-XXXXXXXX"; an AF_UNIX path holds at most
# 107 bytes on Linux and 103 on macOS and the BSDs (plus the closing NUL).
_SOCKET_NAME_BYTES = len("/listener-XXXXXXXX")
_SOCKET_PATH_MAX = 107 if sys.platform.startswith("linux") else 103
_SHORT_TEMP_DIR = "/tmp"
# This module first: it arms the server's exit before the seconds of importing torch.
_BASE_PRELOAD = (__name__, "torch", "torch.distributed", *PRELOADED_PRIVATE_MODULES,
                 "torch_testing_ext._engine.ledger.collectives_preload", "torch_testing_ext._engine.fresh.rank_process",
                 "torch_testing_ext._engine.many_worlds.value_records")
# Last: imports the main script and warms caches as the environment below asks.
_LAST_PRELOAD = "torch_testing_ext._engine.fresh.server_preload"
MAIN_SCRIPT_ENV = "TORCH_TESTING_EXT_MAIN_SCRIPT"
WARM_INDUCTOR_ENV = "TORCH_TESTING_EXT_WARM_INDUCTOR"
WARM_UP_ENV = "TORCH_TESTING_EXT_WARM_UP"

# What _start_server sets in the server's environment (with the device facts).
_SERVER_SETS = ("PYTORCH_NVML_BASED_CUDA_CHECK", _RUN_DIR_ENV, _SOCKET_DIR_ENV, _OWNER_PID_ENV, _SYS_PATH_ENV)

SERVER_STOP_WAIT = 10.0  # seconds a stopping server gets before it is killed

_lock = threading.RLock()
_run_dir: str | None = None
_socket_dir: str | None = None
_preloaded: _Preload | None = None
_owner_pid = os.getpid()  # a process forked from this one (os.fork) owns none of this
# Our own server, not the one multiprocessing shares with every other library in the process:
# nothing another library does with get_context("forkserver") reaches it, nor it them.
_server = multiprocessing.forkserver.ForkServer()
_context = forkserver_context_of(_server)
_alive_pipe: tuple[int, int] | None = None  # (st_dev, st_ino) of the server's alive pipe


def _remove_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def run_directory() -> str:
    """This process's run directory (created on first use, removed at exit)."""
    global _run_dir
    with _lock:
        if _run_dir is None:
            _run_dir = tempfile.mkdtemp(prefix="torch_testing_ext-")
            # After multiprocessing's own exit work: it unlinks our semaphores, which the
            # resource tracker must not find left when we stop it.
            call_after_multiprocessing_exit(_clean_up_at_exit)
        return _run_dir


def _clean_up_at_exit() -> None:
    """At the test process's exit: stop the fork server, then the resource tracker it used,
    waiting for both (so neither outlives us, not even as a zombie); then remove the run
    directory (and the socket directory, if it lies elsewhere). Nothing in a process forked
    from the test process (whose exit handlers are copies of ours)."""
    if os.getpid() != _owner_pid:
        return
    stop_server()
    stop_resource_tracker()
    for path in (_run_dir, _socket_dir):
        if path is not None:
            _remove_dir(path)


def _socket_directory(run_dir: str) -> str:
    """multiprocessing's socket directory (created once): inside the run directory, unless a
    long TMPDIR would make a socket's path there too long to bind; then in /tmp."""
    global _socket_dir
    if _socket_dir is None:
        _socket_dir = tempfile.mkdtemp(prefix="mp-", dir=run_dir)
        if len(os.fsencode(_socket_dir)) + _SOCKET_NAME_BYTES > _SOCKET_PATH_MAX:
            try:
                short = tempfile.mkdtemp(prefix=f"torch_testing_ext-{os.getpid()}-mp-", dir=_SHORT_TEMP_DIR)
            except OSError:  # no usable /tmp: binding will fail, naming the path
                return _socket_dir
            os.rmdir(_socket_dir)
            _socket_dir = short
    return _socket_dir


@dataclasses.dataclass(frozen=True)
class WarmUp:
    """A call the server makes once its modules are imported, so that every rank forked from it
    finds the work done: ``module.function(*arguments)`` (strings, passed through the
    server's environment). Its output and errors are the caller's to handle."""

    module: str
    function: str
    arguments: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class _Preload:
    """What a server preloads: modules, the main script's path, inductor's caches or not, and a
    warm-up call or none."""

    modules: tuple[str, ...]
    main_script: str | None
    warm_inductor: bool
    warm_up: WarmUp | None = None

    def serves(self, wanted: _Preload) -> bool:
        """A server with this preload serves ``wanted`` too (a warm one serves a cold wish)."""
        return (self.modules, self.main_script) == (wanted.modules, wanted.main_script) and \
            self.warm_inductor >= wanted.warm_inductor and \
            wanted.warm_up in (None, self.warm_up)


def _is_alive_pipe(fd: int) -> bool:
    """Whether ``fd`` is still the server's alive pipe (not closed, nor a number reused)."""
    try:
        stat = os.fstat(fd)
    except OSError:
        return False
    return (stat.st_dev, stat.st_ino) == _alive_pipe


def server_alive() -> bool:
    """Whether our fork server runs and can still be reached: its process is our living
    child (not killed, not reaped by someone else's ``os.wait``) and our end of its alive pipe
    is open (nobody closed the descriptor)."""
    pid, fd = forkserver_process(_server)
    if pid is None or fd is None or not _is_alive_pipe(fd):
        return False
    try:
        ended, _status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped by someone else
        return False
    return ended == 0


def stop_server() -> None:
    """Stop our fork server and wait for it (a server that no longer ends by itself is
    killed after ``SERVER_STOP_WAIT`` seconds), whatever state it was left in; the next
    rank starts a new one."""
    global _preloaded
    with _lock:
        pid, fd = forkserver_process(_server)
        forget_forkserver(_server)
        _preloaded = None
        if fd is not None and _is_alive_pipe(fd):
            os.close(fd)  # the server ends once every holder of the pipe closed it
        if pid is not None:
            _wait_for_server(pid)


def _wait_for_server(pid: int) -> None:
    deadline = time.monotonic() + SERVER_STOP_WAIT
    try:
        while os.waitpid(pid, os.WNOHANG)[0] == 0:
            if time.monotonic() > deadline:  # still our child, so the pid is still the server's
                os.kill(pid, signal.SIGTERM)  # it kills what is below it, then leaves
                os.waitpid(pid, 0)
                return
            time.sleep(0.01)
    except ChildProcessError:  # reaped by someone else
        pass


def _start_server(preload: _Preload) -> None:
    global _alive_pipe
    stop_server()
    _server.set_forkserver_preload(list(preload.modules))
    run_dir = run_directory()
    # The server takes its environment and temp dir from us at start; set them for it alone.
    saved = dict(os.environ)
    try:
        devices.export_facts()
        os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
        os.environ[_RUN_DIR_ENV] = run_dir
        os.environ[_SOCKET_DIR_ENV] = _socket_directory(run_dir)
        os.environ[_OWNER_PID_ENV] = str(os.getpid())
        os.environ[_SYS_PATH_ENV] = json.dumps(sys.path)
        os.environ[MAIN_SCRIPT_ENV] = preload.main_script or ""
        os.environ[WARM_INDUCTOR_ENV] = "1" if preload.warm_inductor else ""
        os.environ[WARM_UP_ENV] = "" if preload.warm_up is None else json.dumps(dataclasses.astuple(preload.warm_up))
        with multiprocessing_tempdir(os.environ[_SOCKET_DIR_ENV]):
            _server.ensure_running()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    _pid, fd = forkserver_process(_server)
    assert fd is not None
    stat = os.fstat(fd)
    _alive_pipe = (stat.st_dev, stat.st_ino)


# Callbacks that re-read, in a process forked from the server, what a preloaded module read
# from the environment when the server imported it (see reread_after_adopting).
_rereaders: list[Callable[[], None]] = []


def reread_after_adopting(reread: Callable[[], None]) -> None:
    """Have :func:`adopt_environment` call ``reread()`` once the environment is adopted: for a
    preloaded module whose import reads the environment, which a spawned process would have
    imported under the test process's environment of that moment, not the server's."""
    _rereaders.append(reread)


def adopt_environment(environ: dict[str, str]) -> None:
    """In a process forked from the server: take ``environ`` (the test process's environment
    when it started this process, as a spawned process would inherit it), keeping what the
    server set for the processes forked from it; then make the re-reads registered with
    :func:`reread_after_adopting`."""
    kept = {name: os.environ[name] for name in (*_SERVER_SETS, devices.FACTS_ENV) if name in os.environ}
    os.environ.clear()
    os.environ.update(environ)
    os.environ.update(kept)
    for reread in _rereaders:
        reread()


def forkserver_context(test_module: str, warm_inductor: bool = False,
                       warm_up: WarmUp | None = None) -> multiprocessing.context.ForkServerContext:
    """A forkserver context whose server has preloaded torch and ``test_module`` (for
    ``"__main__"``, the script this process runs), inductor's compiler if ``warm_inductor``,
    and made the ``warm_up`` call if one is given (see ``server_preload``). A server that is
    gone or cannot be reached any more is replaced by a new one."""
    global _preloaded
    warm = warm_up
    if test_module == "__main__":
        wanted = _Preload((*_BASE_PRELOAD, _LAST_PRELOAD), main_script_path(), warm_inductor, warm)
    else:
        wanted = _Preload((*_BASE_PRELOAD, test_module, _LAST_PRELOAD), None, warm_inductor, warm)
    with _lock:
        if _preloaded is None or not _preloaded.serves(wanted) or not server_alive():
            _start_server(wanted)
            _preloaded = wanted
    return _context


def server_pid() -> int | None:
    """The pid of the running fork server, or None."""
    return forkserver_process(_server)[0]


def _reap_children(wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)


def _leave_at_once() -> None:
    """Runs in the server as it exits: kill and reap every process below it, remove the run
    and socket directories if its owner died first, and exit without interpreter teardown."""
    try:
        signal_all(descendants([os.getpid()]))
        _reap_children(SERVER_REAP_WAIT)
        run_multiprocessing_finalizers()  # e.g. unlink semaphores the preloaded modules made
        owner = int(os.environ[_OWNER_PID_ENV])
        if os.getppid() != owner or is_exiting(owner):  # the owner died: nobody else will
            for name in (_RUN_DIR_ENV, _SOCKET_DIR_ENV):
                if os.environ.get(name):
                    _remove_dir(os.environ[name])
    finally:
        os._exit(0)


def serving() -> bool:
    """True when this process is the fork server, importing its preloads."""
    owner = os.environ.get(_OWNER_PID_ENV)
    return owner == str(os.getppid()) and sys.argv[:1] == ["-c"]


def _arm_server() -> None:
    sys.path[:] = json.loads(os.environ.get(_SYS_PATH_ENV) or "null") or sys.path  # before the next preloads
    become_subreaper()
    # Orphans the server adopts are reaped by its SIGCHLD loop, which warns about each.
    warnings.filterwarnings("ignore", message="forkserver: waitpid returned unexpected pid")
    # A normal stop (the owner closes the server's pipe) ends in SystemExit: leave from the
    # first exit handler, so that torch's never run.
    atexit.register(_leave_at_once)
    # If the owner dies while the server is still importing torch, the server would only see
    # it afterwards; the parent-death signal ends it at once. (Ranks reset SIGTERM.)
    signal.signal(signal.SIGTERM, lambda signum, frame: _leave_at_once())
    set_parent_death_signal(signal.SIGTERM)
    if str(os.getppid()) != os.environ[_OWNER_PID_ENV]:  # the owner died before we armed
        _leave_at_once()


if serving():
    _arm_server()
