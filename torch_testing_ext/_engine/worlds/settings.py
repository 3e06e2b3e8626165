"""The settings the harness reads, each checked where it is read.

Environment variables and class attributes take only values the harness can use. A bad one is
a :class:`SettingError` whose message is one line naming the setting, the value and what is
allowed::

    TORCH_TESTING_EXT_TIMEOUT='abc': expected a positive number of seconds

``run_tests()`` checks every environment setting before it loads a test (one line on stderr,
exit status 2); a bad class attribute (``timeout``, ``world_size``) fails that class's tests
with its line before any rank starts. The variables a launcher such as ``torchrun`` sets
(:data:`LAUNCHER_ENV`) are read only when ``RANK`` is set, by
``torch_testing_ext._engine.launched.launcher_env``. Torch-free.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "DEFAULT_WORLD_SIZE",
    "DEFAULT_TEST_TIMEOUT",
    "SettingError",
    "EnvSetting",
    "ENV_SETTINGS",
    "TIMEOUT",
    "LEFTOVER_PROCESSES",
    "HF_BERT",
    "TEST_WITH_SLOW",
    "TEST_WITH_DEV_DBG_ASAN",
    "COLLECTIVES",
    "LAUNCH_RANK",
    "LAUNCH_WORLD_SIZE",
    "LAUNCH_LOCAL_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "LAUNCHER_ENV",
    "positive_seconds",
    "positive_integer",
    "non_negative_integer",
    "port_number",
    "host_address",
    "timeout_seconds",
    "check_environment",
]

__unittest = True  # a SettingError shows as its one line

# The defaults every way of running ranks shares (test cases, pytest's marker, threads).
DEFAULT_WORLD_SIZE = 4  # ranks of a test whose class (or marker) does not say
DEFAULT_TEST_TIMEOUT = 300.0  # seconds for one test on all its ranks


class SettingError(ValueError):
    """A setting whose value the harness cannot use; the message is one line."""


def positive_seconds(where: str, value: Any) -> float:
    """``value`` as a positive, finite number of seconds (``where`` names the setting)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(value, bool) or not 0 < seconds < math.inf:
        raise SettingError(f"{where}={value!r}: expected a positive number of seconds")
    return seconds


def _integer_in(where: str, value: Any, least: int, most: float, expected: str) -> int:
    """``value`` as an integer from ``least`` to ``most``, or SettingError saying ``expected``."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = None
    if (number is None or isinstance(value, bool) or isinstance(value, float) and not value.is_integer()
            or not least <= number <= most):
        raise SettingError(f"{where}={value!r}: expected {expected}")
    return number


def positive_integer(where: str, value: Any) -> int:
    """``value`` as an integer of at least 1 (``where`` names the setting)."""
    return _integer_in(where, value, 1, math.inf, "a positive integer")


def non_negative_integer(where: str, value: Any) -> int:
    """``value`` as an integer of at least 0 (``where`` names the setting)."""
    return _integer_in(where, value, 0, math.inf, "a non-negative integer")


def port_number(where: str, value: Any) -> int:
    """``value`` as a TCP port number, 1 to 65535 (``where`` names the setting)."""
    return _integer_in(where, value, 1, 65535, "a port number from 1 to 65535")


def host_address(where: str, value: str) -> str:
    """``value`` as a host name or address: no blanks (``where`` names the setting)."""
    if not value or any(c.isspace() for c in value):
        raise SettingError(f"{where}={value!r}: expected a host name or address")
    return value


def _one_of(*allowed: str) -> Callable[[str, str], str]:
    def parse(where: str, value: str) -> str:
        if value not in allowed:
            raise SettingError(f"{where}={value!r}: expected one of {', '.join(allowed)}")
        return value

    return parse


_FLAG_WORDS = {"1": True, "true": True, "yes": True, "on": True,
               "0": False, "false": False, "no": False, "off": False}


def _flag(where: str, value: str) -> bool:
    try:
        return _FLAG_WORDS[value.lower()]
    except KeyError:
        raise SettingError(f"{where}={value!r}: expected one of 1, 0, true, false, yes, no, "
                           "on, off") from None


class EnvSetting:
    """One environment variable the harness reads: its name, how it is parsed, its default."""

    def __init__(self, name: str, parse: Callable[[str, str], Any], default: Any) -> None:
        self.name = name
        self._parse = parse
        self.default = default

    def get(self, environ: Mapping[str, str] | None = None) -> Any:
        """The variable's value in ``environ`` (default ``os.environ``), or the default when
        unset or empty; SettingError if bad."""
        raw = (os.environ if environ is None else environ).get(self.name, "")
        return self.default if raw == "" else self._parse(self.name, raw)


TIMEOUT = EnvSetting("TORCH_TESTING_EXT_TIMEOUT", positive_seconds, None)
LEFTOVER_PROCESSES = EnvSetting("TORCH_TESTING_EXT_LEFTOVER_PROCESSES", _one_of("warn", "fail"), "warn")
HF_BERT = EnvSetting("TORCH_TESTING_EXT_HF_BERT", _one_of("upstream", "cpu"), None)
TEST_WITH_SLOW = EnvSetting("PYTORCH_TEST_WITH_SLOW", _flag, False)
TEST_WITH_DEV_DBG_ASAN = EnvSetting("PYTORCH_TEST_WITH_DEV_DBG_ASAN", _flag, False)
COLLECTIVES = EnvSetting("TORCH_TESTING_EXT_COLLECTIVES", _one_of("record", "off"), "record")
ENV_SETTINGS = (TIMEOUT, LEFTOVER_PROCESSES, HF_BERT, TEST_WITH_SLOW, TEST_WITH_DEV_DBG_ASAN, COLLECTIVES)

# What a launcher (torchrun, or any that sets them) tells each process it starts; read only
# when RANK is set, and then all are required (launched.launcher_env).
LAUNCH_RANK = EnvSetting("RANK", non_negative_integer, None)
LAUNCH_WORLD_SIZE = EnvSetting("WORLD_SIZE", positive_integer, None)
LAUNCH_LOCAL_RANK = EnvSetting("LOCAL_RANK", non_negative_integer, None)
MASTER_ADDR = EnvSetting("MASTER_ADDR", host_address, None)
MASTER_PORT = EnvSetting("MASTER_PORT", port_number, None)
LAUNCHER_ENV = (LAUNCH_RANK, LAUNCH_WORLD_SIZE, LAUNCH_LOCAL_RANK, MASTER_ADDR, MASTER_PORT)


def timeout_seconds(where: str, value: Any) -> float:
    """A test's timeout: ``TORCH_TESTING_EXT_TIMEOUT`` when set, which overrides any class or
    decorator value; else ``value``, checked as :func:`positive_seconds` (``where`` names it)."""
    return TIMEOUT.get() or positive_seconds(where, value)


def check_environment() -> None:
    """Raise :class:`SettingError` for the first environment setting with a bad value."""
    for setting in ENV_SETTINGS:
        setting.get()
