"""What one run of the kit is asked to do, from pytest's options or, in a rank, the environment.

``pytest --c10d-backend NAME [--c10d-import MODULE] [--c10d-claims NAME|FILE] [--c10d-device TYPE]
[--c10d-world-sizes 2,3] [--c10d-only AREA]... [--c10d-item-timeout S] [--c10d-report FILE]
--pyargs torch_testing_ext.conformance`` (``python -m torch_testing_ext.conformance`` passes the
same). The test process checks them into :class:`KitSettings` (a bad one is a
:class:`~torch_testing_ext._engine.worlds.settings.SettingError`, one line) and puts them in the
environment, where each rank's own pytest session reads them back (:func:`from_environment`):
the ranks must make the same tests. Torch-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from ..worlds.settings import SettingError, positive_seconds
from .vocabulary import AREAS

__all__ = ["KitSettings", "OPTIONS", "ENVIRONMENT", "DEFAULT_ITEM_TIMEOUT", "DEFAULT_WORLD_SIZES", "parse_world_sizes",
           "checked_settings", "to_environment", "from_environment"]

DEFAULT_ITEM_TIMEOUT = 20.0  # seconds for all ranks of one item
DEFAULT_WORLD_SIZES = (2,)
#: pytest's option for each setting (``--c10d-...``).
OPTIONS = {"backend": "--c10d-backend", "import_module": "--c10d-import", "claims": "--c10d-claims",
           "device": "--c10d-device", "world_sizes": "--c10d-world-sizes", "only": "--c10d-only",
           "item_timeout": "--c10d-item-timeout", "report": "--c10d-report"}
#: The environment variable that carries each setting to the ranks.
ENVIRONMENT = {name: "TORCH_TESTING_EXT_C10D_" + name.upper() for name in OPTIONS}


@dataclasses.dataclass(frozen=True)
class KitSettings:
    """A checked run of the kit: the backend, the module that registers it, borrowed claims, the
    device type (None: the claims' first), the world sizes, the areas to run (empty: all), the
    seconds each item has, and where the scored report goes (None: nowhere)."""

    backend: str
    import_module: str | None = None
    claims: str | None = None
    device: str | None = None
    world_sizes: tuple[int, ...] = DEFAULT_WORLD_SIZES
    only: tuple[str, ...] = ()
    item_timeout: float = DEFAULT_ITEM_TIMEOUT
    report: str | None = None


def parse_world_sizes(text: str) -> tuple[int, ...]:
    """``"2,3,4"`` as (2, 3, 4); ``SettingError`` unless each is an integer of at least 2."""
    parts = [part.strip() for part in str(text).split(",")]
    sizes = []
    for part in parts:
        if not part.isdigit() or int(part) < 2:
            raise SettingError(f"{OPTIONS['world_sizes']}={text!r}: expected world sizes of at least 2, "
                               "comma-separated (2,3,4)")
        sizes.append(int(part))
    if len(set(sizes)) != len(sizes):
        raise SettingError(f"{OPTIONS['world_sizes']}={text!r}: a world size is given twice")
    return tuple(sizes)


def checked_settings(backend: str | None, import_module: str | None = None, claims: str | None = None,
                     device: str | None = None, world_sizes: str | None = None, only: tuple[str, ...] = (),
                     item_timeout: str | float | None = None, report: str | None = None) -> KitSettings:
    """The settings, checked; ``SettingError`` (one line) naming the first bad one."""
    if not backend or not backend.strip():
        raise SettingError(f"{OPTIONS['backend']}: name the backend to check (gloo, threaded, fake, or one "
                           f"{OPTIONS['import_module']} MODULE registers)")
    unknown = [area for area in only if area not in AREAS]
    if unknown:
        raise SettingError(f"{OPTIONS['only']} {unknown[0]}: no such area; the areas are {', '.join(AREAS)}")
    timeout = DEFAULT_ITEM_TIMEOUT if item_timeout in (None, "") else positive_seconds(OPTIONS["item_timeout"],
                                                                                       item_timeout)
    if report and not report.endswith((".md", ".json")):
        raise SettingError(f"{OPTIONS['report']}={report!r}: a report is FILE.md (Markdown) or FILE.json")
    return KitSettings(backend.strip(), import_module or None, claims or None, device or None,
                       parse_world_sizes(world_sizes) if world_sizes else DEFAULT_WORLD_SIZES,
                       tuple(dict.fromkeys(only)), timeout, report or None)


def to_environment(settings: KitSettings) -> dict[str, str]:
    """The environment variables that carry ``settings`` to the ranks."""
    values = {"backend": settings.backend, "import_module": settings.import_module or "",
              "claims": settings.claims or "", "device": settings.device or "",
              "world_sizes": ",".join(map(str, settings.world_sizes)), "only": ",".join(settings.only),
              "item_timeout": repr(settings.item_timeout), "report": ""}
    return {ENVIRONMENT[name]: value for name, value in values.items()}


def from_environment(environ: Mapping[str, str]) -> KitSettings | None:
    """The settings the test process put in ``environ`` (None when it put none)."""
    backend = environ.get(ENVIRONMENT["backend"])
    if not backend:
        return None
    only = tuple(area for area in environ.get(ENVIRONMENT["only"], "").split(",") if area)
    return checked_settings(backend, environ.get(ENVIRONMENT["import_module"]), environ.get(ENVIRONMENT["claims"]),
                            environ.get(ENVIRONMENT["device"]), environ.get(ENVIRONMENT["world_sizes"]), only,
                            environ.get(ENVIRONMENT["item_timeout"]))
