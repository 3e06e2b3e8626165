"""Time each test class of ``test/distributed/test_dynamo_distributed.py``.

Every class runs in its own subprocess (``python <file> <Class>``), one after the other, so
the classes do not compete for the CPU. The script prints a table of wall seconds and
passed/skipped/failed counts per class, then the total, and exits 1 if any class failed.

Usage::

    python benchmarks/time_dynamo_distributed.py                  # all classes
    python benchmarks/time_dynamo_distributed.py TestSingleProc   # some classes
    python benchmarks/time_dynamo_distributed.py --cold-cache     # empty Inductor cache

``--cold-cache`` gives every class a fresh, temporary ``TORCHINDUCTOR_CACHE_DIR``, so the
times include compiling every kernel (what a fresh CI machine pays).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_FILE = os.path.join(ROOT, "test", "distributed", "test_dynamo_distributed.py")

_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
_SUMMARY = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.MULTILINE)


@dataclasses.dataclass
class ClassTiming:
    name: str
    seconds: float
    ran: int = 0
    skipped: int = 0
    failed: int = 0  # failures + errors (+ a crashed run)

    @property
    def passed(self) -> int:
        return self.ran - self.skipped - self.failed


def list_classes(test_file: str) -> list[str]:
    """The test classes of ``test_file``, in file order (from its ``--list`` output)."""
    out = subprocess.run([sys.executable, test_file, "--list"], check=True, text=True,
                         capture_output=True).stdout
    classes: list[str] = []
    for line in out.splitlines():
        name = line.strip().split(".")[0]
        if name and name not in classes:
            classes.append(name)
    return classes


def parse_counts(timing: ClassTiming, output: str) -> None:
    """Fill ``timing``'s counts from unittest's closing lines in ``output``."""
    ran = _RAN.findall(output)
    summary = _SUMMARY.findall(output)
    if not ran or not summary:
        timing.failed = max(timing.failed, 1)  # the run died before reporting
        return
    timing.ran = int(ran[-1])
    details = dict(part.split("=") for part in summary[-1][1].split(", ") if "=" in part)
    timing.skipped = int(details.get("skipped", 0))
    timing.failed = (int(details.get("failures", 0)) + int(details.get("errors", 0))
                     + int(details.get("unexpected successes", 0)))


def time_class(test_file: str, name: str, cold_cache: bool, log_dir: str | None) -> ClassTiming:
    env = dict(os.environ)
    cache_dir = tempfile.mkdtemp(prefix="inductor-cache-") if cold_cache else None
    if cache_dir:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, test_file, name, "-v"], env=env, text=True,
                              check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              cwd=ROOT)
    finally:
        if cache_dir:
            shutil.rmtree(cache_dir, ignore_errors=True)
    timing = ClassTiming(name, time.monotonic() - start)
    parse_counts(timing, proc.stdout)
    if proc.returncode != 0:
        timing.failed = max(timing.failed, 1)
    if log_dir:
        with open(os.path.join(log_dir, f"{name}.log"), "w") as log:
            log.write(proc.stdout)
    return timing


def format_table(timings: list[ClassTiming]) -> str:
    width = max([len("class"), len("total")] + [len(t.name) for t in timings])
    total = ClassTiming("total", sum(t.seconds for t in timings), sum(t.ran for t in timings),
                        sum(t.skipped for t in timings), sum(t.failed for t in timings))
    lines = [f"{'class':<{width}}  {'seconds':>8}  {'passed':>6}  {'skipped':>7}  {'failed':>6}"]
    for t in [*timings, total]:
        lines.append(f"{t.name:<{width}}  {t.seconds:8.1f}  {t.passed:6d}  {t.skipped:7d}  "
                     f"{t.failed:6d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("classes", nargs="*", help="test classes to time (default: all)")
    parser.add_argument("--file", default=TEST_FILE, help="test file (default: %(default)s)")
    parser.add_argument("--cold-cache", action="store_true",
                        help="give each class an empty temporary Inductor cache")
    parser.add_argument("--log-dir", help="write each class's output to <dir>/<class>.log")
    args = parser.parse_args(argv)

    classes = args.classes or list_classes(args.file)
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
    timings = []
    for name in classes:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        timings.append(time_class(args.file, name, args.cold_cache, args.log_dir))
    print(format_table(timings))
    return 1 if any(t.failed for t in timings) else 0


if __name__ == "__main__":
    sys.exit(main())
