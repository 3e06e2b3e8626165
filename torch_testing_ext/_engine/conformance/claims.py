"""What a backend claims: the areas, dtypes and reduce ops of the contract it promises.

A manifest is a JSON file or a dict (``CONFORMANCE_CLAIMS`` in the module ``--import`` names)::

    {"backend": "gloo", "devices": ["cpu"],
     "areas": ["collectives", "p2p", ...], "dtypes": ["float32", ...], "reduce_ops": ["SUM", ...],
     "not_claimed": {"collectives.all_reduce[[]AVG-*]": "AVG not implemented yet"}}

An item is claimed when its area is, its dtype and reduce op are (if it has them), and no
``not_claimed`` pattern (``fnmatch`` over item ids) matches it; :meth:`Claims.reason_not_claimed`
says why not otherwise. The kit ships manifests for gloo, the threaded and the fake process
groups (``manifests/``); a backend with none is held to the :data:`CORE` contract: what gloo
supports on CPU. A manifest the kit cannot use is a :class:`ClaimsError`, one line naming the
problem. Torch-free.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .vocabulary import AREAS, DTYPES, REDUCE_OPS

__all__ = ["Claims", "ClaimsError", "CORE", "SHIPPED", "shipped_names", "claims_from", "load_claims",
           "AREA_NAMES", "DTYPE_NAMES", "REDUCE_OP_NAMES"]

MANIFESTS = Path(__file__).resolve().parent / "manifests"
_KEYS = ("backend", "devices", "areas", "dtypes", "reduce_ops", "not_claimed")

AREA_NAMES = tuple(AREAS)
DTYPE_NAMES = DTYPES
REDUCE_OP_NAMES = REDUCE_OPS


class ClaimsError(ValueError):
    """A manifest the kit cannot use; the message is one line."""


@dataclasses.dataclass(frozen=True)
class Claims:
    """A checked manifest, and where it came from (``source``)."""

    backend: str
    devices: tuple[str, ...]
    areas: frozenset[str]
    dtypes: frozenset[str]
    reduce_ops: frozenset[str]
    not_claimed: tuple[tuple[str, str], ...]
    source: str

    def reason_not_claimed(self, item_id: str, area: str, dtype: str | None, reduce_op: str | None) -> str | None:
        """Why the item is not claimed (``not claimed: ...``), or None if it is."""
        if area not in self.areas:
            return f"not claimed: the area {area}"
        if dtype is not None and dtype not in self.dtypes:
            return f"not claimed: the dtype {dtype}"
        if reduce_op is not None and reduce_op not in self.reduce_ops:
            return f"not claimed: the reduce op {reduce_op}"
        for pattern, reason in self.not_claimed:
            if fnmatch.fnmatchcase(item_id, pattern):
                return f"not claimed: {reason}"
        return None

    def as_dict(self) -> dict[str, Any]:
        """The manifest, as a report shows it."""
        return {"backend": self.backend, "devices": list(self.devices), "areas": sorted(self.areas),
                "dtypes": sorted(self.dtypes), "reduce_ops": sorted(self.reduce_ops),
                "not_claimed": dict(self.not_claimed), "source": self.source}


def _names(where: str, key: str, value: Any, allowed: tuple[str, ...] | None) -> frozenset[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ClaimsError(f"{where}: {key!r} must be a list of strings, got {value!r}")
    unknown = sorted(set(value) - set(allowed)) if allowed is not None else []
    if unknown:
        raise ClaimsError(f"{where}: {key!r} names {', '.join(map(repr, unknown))}, not in the contract "
                          f"(known: {', '.join(allowed or ())})")
    return frozenset(value)


def claims_from(manifest: Any, source: str, backend: str | None = None) -> Claims:
    """``manifest`` (a dict) checked; ``ClaimsError`` naming ``source`` and the problem. ``backend``:
    the backend the kit runs, for a manifest borrowed from another (its own name kept)."""
    if not isinstance(manifest, Mapping):
        raise ClaimsError(f"{source}: a manifest is a JSON object (a dict), got {type(manifest).__name__}")
    unknown = sorted(set(manifest) - set(_KEYS))
    if unknown:
        raise ClaimsError(f"{source}: unknown key {', '.join(map(repr, unknown))}; a manifest has {', '.join(_KEYS)}")
    missing = [key for key in ("areas",) if key not in manifest]
    if missing:
        raise ClaimsError(f"{source}: no {missing[0]!r}: a manifest lists the areas it claims")
    not_claimed = manifest.get("not_claimed", {})
    if not isinstance(not_claimed, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                       for k, v in not_claimed.items()):
        raise ClaimsError(f"{source}: 'not_claimed' maps item-id patterns to reasons (strings)")
    return Claims(str(manifest.get("backend", backend or "")),
                  tuple(_names(source, "devices", manifest.get("devices", ["cpu"]), None)),
                  _names(source, "areas", manifest["areas"], AREA_NAMES),
                  _names(source, "dtypes", manifest.get("dtypes", list(DTYPE_NAMES)), DTYPE_NAMES),
                  _names(source, "reduce_ops", manifest.get("reduce_ops", list(REDUCE_OP_NAMES)), REDUCE_OP_NAMES),
                  tuple(sorted(not_claimed.items())), source)


#: The core contract: what gloo supports on CPU, for a backend that claims nothing of its own.
CORE: dict[str, Any] = {"devices": ["cpu"], "areas": ["collectives", "p2p", "objects", "groups", "async"],
                        "dtypes": ["float32", "float64", "int32", "int64"],
                        "reduce_ops": ["SUM", "PRODUCT", "MIN", "MAX"], "not_claimed": {}}


def shipped_names() -> list[str]:
    """The manifests the kit ships (``gloo``, ``threaded``, ``fake``...)."""
    return sorted(path.stem for path in MANIFESTS.glob("*.json"))


SHIPPED = "shipped"


def _read(path: Path, source: str) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as error:
        raise ClaimsError(f"{source}: cannot read it: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ClaimsError(f"{source}: not JSON: {error.msg} at line {error.lineno}") from None


def load_claims(backend: str, borrowed: str | None = None, module_claims: Any = None) -> Claims:
    """The claims the kit holds ``backend`` to: ``borrowed`` (a shipped manifest's name, or a JSON
    file), else the ``CONFORMANCE_CLAIMS`` of the module that registers it, else a shipped
    manifest of the backend's own name, else the core contract."""
    if borrowed:
        path = Path(borrowed)
        if borrowed in shipped_names():
            return claims_from(_read(MANIFESTS / f"{borrowed}.json", f"the {borrowed} manifest"),
                               f"{borrowed}'s manifest (borrowed)", backend)
        if path.suffix == ".json" or path.exists():
            return claims_from(_read(path, borrowed), borrowed, backend)
        raise ClaimsError(f"--claims {borrowed}: neither a shipped manifest ({', '.join(shipped_names())}) nor a "
                          "JSON file")
    if module_claims is not None:
        return claims_from(module_claims, "CONFORMANCE_CLAIMS of the imported module", backend)
    if backend in shipped_names():
        return claims_from(_read(MANIFESTS / f"{backend}.json", f"the {backend} manifest"),
                           f"{backend}'s manifest (shipped with the kit)", backend)
    return claims_from({**CORE, "backend": backend}, "the core contract (no manifest: what gloo does on CPU)", backend)
