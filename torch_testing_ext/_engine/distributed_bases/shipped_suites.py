"""Suites that torch ships in its wheel, run on this harness.

Some of upstream's biggest suites are not test files but modules inside the installed torch
(``torch/testing/_internal/distributed/distributed_test.py``, the RPC suites), which thin test
files subclass. Our faces of those modules hold none of their code: each loads the installed
torch's own file, with every upstream harness path in it rewritten to ours by the migration's
rule (``_engine.migrate.source_rewrite``, which keeps every line where it is), and runs it in
the face's namespace. So the suite is always the installed torch's version, its classes stand
on our harness, and a traceback names the real file and line.

Upstream starts the ranks of these suites with ``spawn``: each rank imports the suite afresh,
under the environment of that moment (``TestDistBackend.setUp`` points ``INIT_METHOD`` and
``TEMP_DIR`` at new directories for every test, and the module reads them at import). Our
ranks fork from a server that imported the suite once, so a rank whose environment differs
from the one the suite was loaded under, in a variable the suite names (a string constant of
its code), runs the module's code again in the same namespace (a few milliseconds; the
compiled code is kept), and the suite's methods see what a spawned rank's would.

Modules of data that torch ships beside its suites (``common_methods_invocations`` and its
``op_db``, ``opinfo/``) load the same way with :func:`load_shipped_module`, but once: never
again in a rank (test files change their objects as they are imported), and without marks.

The suites' classes are marked ``not_in_lockstep``: torch's own harness, which these suites
are written for and checked on, has no lockstep rule, and some of their tests make ranks
differ on purpose (a barrier that times out because one rank stays away). Their verdicts are
upstream's; a failure still shows the ranks' collective calls.
"""

from __future__ import annotations

import importlib
import os
from types import CodeType
from typing import Any

from .._torch_private import shipped_suite_path
from ..fresh.fork_server import reread_after_adopting
from ..ledger.faults import not_in_lockstep
from ..migrate.source_rewrite import rewrite_source
from ..migrate.upstream_paths import OURS

__all__ = ["load_shipped_suite", "load_suite_file", "load_shipped_module"]


def _classes_of(namespace: dict[str, Any], module: str) -> list[type]:
    """The classes ``module`` defines in ``namespace``, and the classes nested in them."""
    found: list[type] = []
    pending = list(namespace.values())
    while pending:
        value = pending.pop()
        if isinstance(value, type) and value.__module__ == module and value not in found:
            found.append(value)
            pending.extend(vars(value).values())
    return found


def _string_constants(code: CodeType) -> frozenset[str]:
    """The string constants of ``code`` and of the code nested in it (functions, classes)."""
    found: set[str] = set()
    pending = [code]
    while pending:
        for constant in pending.pop().co_consts:
            if isinstance(constant, str):
                found.add(constant)
            elif isinstance(constant, CodeType):
                pending.append(constant)
    return frozenset(found)


def _environment(names: frozenset[str]) -> dict[str, str]:
    """The environment variables among ``names`` that are set, with their values."""
    return {name: value for name, value in os.environ.items() if name in names}


def _compiled(path: str) -> CodeType:
    """The installed torch's file at ``path``, its upstream harness paths rewritten to ours."""
    with open(path, encoding="utf-8") as file:
        source = file.read()
    return compile(rewrite_source(source, path), path, "exec", dont_inherit=True)


def _names_of(code: CodeType) -> frozenset[str]:
    """The global and attribute names ``code`` and the code nested in it read."""
    found: set[str] = set()
    pending = [code]
    while pending:
        current = pending.pop()
        found.update(current.co_names)
        pending.extend(constant for constant in current.co_consts if isinstance(constant, CodeType))
    return frozenset(found)


def _bind_package(code: CodeType, namespace: dict[str, Any]) -> None:
    """Bind this package's name in ``namespace`` where the rewritten code reads it as a dotted
    use (``torch.testing._internal.common_utils.x`` became ``torch_testing_ext.common_utils.x``,
    which upstream reaches through ``import torch``)."""
    if OURS in _names_of(code) and OURS not in namespace:
        namespace[OURS] = importlib.import_module(OURS)


def _run(code: CodeType, namespace: dict[str, Any]) -> None:
    exec(code, namespace)  # noqa: S102  # the installed torch's own suite, as torch would import it
    for cls in _classes_of(namespace, namespace["__name__"]):
        not_in_lockstep(cls)


def load_shipped_suite(namespace: dict[str, Any], relative: str, needs: tuple[str, ...] = ()) -> None:
    """Run the installed torch's ``torch/testing/_internal/<relative>``, its harness imports
    bound to this package, in ``namespace`` (a face module's ``globals()``); in a rank forked
    from the fork server, run it again there if the rank's environment is not the one it was
    loaded under. ``needs``: the environment variables the suite reads as it is imported (an
    ``ImportError`` names the missing ones, where the suite would raise ``KeyError``)."""
    missing = [name for name in needs if name not in os.environ]
    if missing:
        raise ImportError(f"{namespace['__name__']} (torch's torch/testing/_internal/{relative}) reads "
                          f"{', '.join(needs)} from the environment as it is imported, as upstream's CI "
                          f"sets them; missing: {', '.join(missing)} (for example BACKEND=gloo WORLD_SIZE=2)")
    load_suite_file(namespace, shipped_suite_path(relative))


def load_suite_file(namespace: dict[str, Any], path: str) -> None:
    """:func:`load_shipped_suite` for the suite file at ``path``."""
    code = _compiled(path)
    _bind_package(code, namespace)
    # The suite's own file, as when torch imports it: its classes' source is found there (inspect
    # looks a class up by its module's __file__; TorchScript compiles from it), and so are files
    # the suite finds beside itself.
    namespace["__shipped_suite__"] = namespace["__file__"] = path
    names = _string_constants(code)  # every variable the suite can read by name is among them
    loaded_under = _environment(names)
    _run(code, namespace)

    def reread() -> None:
        if _environment(names) != loaded_under:
            _run(code, namespace)

    reread_after_adopting(reread)


def load_shipped_module(namespace: dict[str, Any], relative: str) -> None:
    """Run the installed torch's ``torch/testing/_internal/<relative>``, a module of data and
    helpers rather than a suite (``common_methods_invocations``, ``opinfo/core.py``), in
    ``namespace`` (a face module's ``globals()``), its harness imports bound to this package.
    Run once: its classes are not suites (no lockstep mark), and a forked rank keeps the
    objects the fork server made (test files change them, as ``test_dtensor_ops`` adds
    decorators to ``op_db``'s entries; running it again would drop that)."""
    path = shipped_suite_path(relative)
    code = _compiled(path)
    _bind_package(code, namespace)
    namespace["__shipped_suite__"] = namespace["__file__"] = path
    exec(code, namespace)  # noqa: S102  # the installed torch's own module, as torch would import it
