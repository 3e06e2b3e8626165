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

The suites' classes are marked ``not_in_lockstep``: torch's own harness, which these suites
are written for and checked on, has no lockstep rule, and some of their tests make ranks
differ on purpose (a barrier that times out because one rank stays away). Their verdicts are
upstream's; a failure still shows the ranks' collective calls.
"""

from __future__ import annotations

import os
from types import CodeType
from typing import Any

from .._torch_private import shipped_suite_path
from ..fresh.fork_server import reread_after_adopting
from ..ledger.faults import not_in_lockstep
from ..migrate.source_rewrite import rewrite_source

__all__ = ["load_shipped_suite", "load_suite_file"]


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
    with open(path, encoding="utf-8") as file:
        source = file.read()
    code = compile(rewrite_source(source, path), path, "exec", dont_inherit=True)
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
