"""Migrated upstream test files on our harness with the collective ledger on and off, per test.

Give it PyTorch test files (for example copies of ``test/distributed/tensor/test_*.py`` read
from ``pytorch/pytorch``; they are never copied into this repository) and their helpers. Like
``benchmarks/side_by_side.py`` (whose functions it imports) it copies them into a temporary
directory and rewrites the copies with ``python -m torch_testing_ext.migrate``; then it runs
every copied file that has a ``__main__`` block on our harness twice, one after the other, as
``python FILE -v --save-xml DIR`` with ``TORCH_TESTING_EXT_COLLECTIVES=record`` and then
``=off`` (``--modes`` changes the order). Each test's outcome is read from the JUnit XML of
the run. It prints one table row per file: tests, passed / skipped / failed and wall time in
each mode, and whether every test ended the same way; below the table, every test whose
outcome differs, with the first line of each failure::

    python benchmarks/ledger_side_by_side.py /tmp/upstream-dtensor/tensor/test_embedding_ops.py
    python benchmarks/ledger_side_by_side.py FILES --keep /tmp/results/before  # keep XML and logs

With ``--keep DIR`` the reports stay in ``DIR/<mode>/<file stem>/TEST-<stem>.xml`` and the
output of each run in ``DIR/<mode>/<file stem>.log``; the printed table is appended to
``DIR/tables.md``. ``--compare DIR`` reads such a kept directory instead of running anything
and prints the same table (to compare a later commit's run with an earlier one, run both with
``--keep`` and read each). The harness that runs is the ``torch_testing_ext`` that
``python`` imports (set ``PYTHONPATH`` to measure another checkout); its path is printed.

Exit status: 0 when every test of every file ended the same way in each mode, 1 otherwise,
2 on bad arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
MODES = ("record", "off")
PASSED, SKIPPED, FAILED, MISSING = "passed", "skipped", "failed", "missing"


def _side_by_side() -> ModuleType:
    """``benchmarks/side_by_side.py`` as a module (the benchmarks are scripts, not a package)."""
    if "side_by_side" not in sys.modules:
        spec = importlib.util.spec_from_file_location("side_by_side", HERE / "side_by_side.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules["side_by_side"]


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One test case of a JUnit report: passed, skipped or failed, and the first line of why."""

    kind: str
    why: str = ""

    def __str__(self) -> str:
        return f"{self.kind} ({self.why})" if self.why else self.kind


def _first_line(text: str) -> str:
    """The first line that says something: not a traceback's header nor a blank."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("Traceback (most recent call last)"):
            return line
    return ""


# An exception's line in a report's details, a rank's prefix kept apart: "[rank 0] AssertionError: 0 != 1".
EXCEPTION_LINE = re.compile(r"^(?:\[rank (\d+)\] )?((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*"
                            r"(?:Error|Exception|Exit|Interrupt|Failure|Failed|Timeout)\b(?::.*)?)$")


def _why(message: str, details: str) -> str:
    """The first line of a failure. When that only sums up the ranks (``4 of 4 ranks did not
    pass``) or is empty, also the first exception the details show (a rank's, ``rank 0:
    AssertionError: 0 != 1``), skipping the summary's own line."""
    summary = _first_line(message)
    for line in details.splitlines():
        found = EXCEPTION_LINE.match(line.strip())
        if not found:
            continue
        text = found.group(2)
        if summary and (text == summary or text.endswith(": " + summary)):
            continue
        where = f"rank {found.group(1)}: " if found.group(1) is not None else ""
        return f"{summary}; {where}{text}" if summary else f"{where}{text}"
    return summary or _first_line(details)


def read_report(path: Path) -> dict[str, Outcome]:
    """``{"Class.test": Outcome}`` for every ``<testcase>`` of the JUnit files under ``path``
    (a file or a directory of them); a missing or unreadable report gives nothing."""
    found: dict[str, Outcome] = {}
    files = sorted(path.rglob("*.xml")) if path.is_dir() else [path] if path.is_file() else []
    for file in files:
        try:
            root = ET.parse(file).getroot()
        except (ET.ParseError, OSError):
            continue
        for case in root.iter("testcase"):
            test = f"{case.get('classname', '').rpartition('.')[2]}.{case.get('name', '')}"
            outcome = Outcome(PASSED)
            for child in case:
                if child.tag in ("failure", "error"):
                    outcome = Outcome(FAILED, _why(child.get("message") or "", child.text or ""))
                    break
                if child.tag == "skipped":
                    outcome = Outcome(SKIPPED, _first_line(child.get("message") or child.text or ""))
            found.setdefault(test, outcome)
    return found


@dataclasses.dataclass
class ModeRun:
    """One file run in one mode: exit status, wall time and each test's outcome."""

    status: int
    seconds: float
    tests: dict[str, Outcome]

    def count(self, kind: str) -> int:
        return sum(outcome.kind == kind for outcome in self.tests.values())

    def cells(self) -> list[str]:
        # A run that failed without a failing test (a crash, a timeout) counts one failure.
        failed = self.count(FAILED) + (1 if self.status and not self.count(FAILED) else 0)
        status = "" if self.status in (0, 1) else f" (exit {self.status})"
        return [f"{self.count(PASSED)} / {self.count(SKIPPED)} / {failed}{status}", f"{self.seconds:.1f} s"]


def run_mode(directory: Path, name: str, mode: str, timeout: float, out: Path) -> ModeRun:
    """``name`` run on our harness with the ledger in ``mode``; its report under ``out/<mode>/``."""
    stem = Path(name).stem
    reports, log = out / mode / stem, out / mode / f"{stem}.log"
    shutil.rmtree(reports, ignore_errors=True)
    reports.mkdir(parents=True)
    run = _side_by_side().run_file(directory, name, timeout, log, args=["--save-xml", str(reports)],
                                   env={"TORCH_TESTING_EXT_COLLECTIVES": mode})
    (out / mode / f"{stem}.status").write_text(f"{run.status} {run.seconds:.3f}\n")
    return ModeRun(run.status, run.seconds, read_report(reports))


def read_mode(out: Path, stem: str, mode: str) -> ModeRun | None:
    """A run kept by ``--keep`` (``None`` when that file was not run in that mode)."""
    try:
        status, seconds = (out / mode / f"{stem}.status").read_text().split()
    except (OSError, ValueError):
        return None
    return ModeRun(int(status), float(seconds), read_report(out / mode / stem))


def differences(runs: dict[str, ModeRun]) -> list[str]:
    """The tests that did not end the same way in every mode, one line each."""
    tests = sorted(set().union(*(run.tests for run in runs.values())))
    lines = []
    for test in tests:
        outcomes = {mode: run.tests.get(test, Outcome(MISSING)) for mode, run in runs.items()}
        if len({outcome.kind for outcome in outcomes.values()}) > 1:
            lines.append(f"{test}: " + "; ".join(f"{mode} {outcome!s:.240}" for mode, outcome in outcomes.items()))
    return lines


def table(results: Sequence[tuple[str, dict[str, ModeRun]]], modes: Sequence[str]) -> tuple[list[str], bool]:
    """The printed table and the differing tests, and whether every file ended the same way."""
    names = ["file", "tests"]
    for mode in modes:
        names += [f"{mode} pass / skip / fail", "wall"]
    names.append("same outcome per test")
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    listed, same_everywhere = [], True
    total = dict.fromkeys(modes, 0.0)
    for name, runs in results:
        differ = differences(runs)
        same = not differ and len({run.status == 0 for run in runs.values()}) == 1
        same_everywhere = same_everywhere and same
        row = [name, str(len(set().union(*(run.tests for run in runs.values()))))]
        for mode in modes:
            row += runs[mode].cells()
            total[mode] += runs[mode].seconds
        row.append("yes" if same else f"no ({len(differ)})")
        lines.append("| " + " | ".join(row) + " |")
        listed += [f"{name} {line}" for line in differ]
    lines.append("")
    lines.append("total wall: " + ", ".join(f"{mode} {seconds:.1f} s" for mode, seconds in total.items()))
    if listed:
        lines += ["", "Tests that ended differently:", *listed]
    return lines, same_everywhere


def our_harness() -> str:
    """Where the ``torch_testing_ext`` that the runs import lives, and torch's version."""
    probe = "import torch, torch_testing_ext; print(torch_testing_ext.__file__, torch.__version__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tempfile.gettempdir())
    return done.stdout.strip() or f"not importable: {done.stderr.strip()[-300:]}"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="upstream test files (and their helpers)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per file and mode")
    parser.add_argument("--modes", default=",".join(MODES), help="the order of the runs (default record,off)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the reports, logs and table in DIR")
    parser.add_argument("--compare", type=Path, metavar="DIR", help="read a kept DIR instead of running")
    args = parser.parse_args(argv)
    args.modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    if len(args.modes) < 2 or len(set(args.modes)) != len(args.modes) or not set(args.modes) <= set(MODES):
        parser.error(f"--modes takes two or more of {', '.join(MODES)}, each once")
    if args.compare is not None:
        if args.files or args.keep is not None:
            parser.error("--compare reads a kept directory: give no files and no --keep")
        if not args.compare.is_dir():
            parser.error(f"not a directory: {args.compare}")
        return args
    if not args.files:
        parser.error("give test files, or --compare DIR")
    _side_by_side().check_files(parser, args.files)
    return args


def compare(out: Path, modes: Sequence[str]) -> int:
    stems = sorted({p.stem for mode in modes for p in (out / mode).glob("*.status")})
    results = []
    for stem in stems:
        runs = {mode: read_mode(out, stem, mode) for mode in modes}
        if all(run is not None for run in runs.values()):
            results.append((f"{stem}.py", {mode: run for mode, run in runs.items() if run is not None}))
    lines, same = table(results, modes)
    print("\n".join([f"# collective ledger {' vs '.join(modes)}: {out}", "", *lines]))
    return 0 if same else 1


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    if args.compare is not None:
        return compare(args.compare, args.modes)
    sbs = _side_by_side()
    work = Path(tempfile.mkdtemp(prefix="ledger_side_by_side-"))
    copies = work / "files"
    copies.mkdir()
    for path in args.files:
        shutil.copy(path, copies / path.name)
    migrated = subprocess.run([sys.executable, "-m", "torch_testing_ext.migrate", str(copies)],
                              capture_output=True, text=True)
    if migrated.returncode:
        print(f"ledger_side_by_side.py: migrate failed: {migrated.stdout}{migrated.stderr}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return 1
    out = args.keep if args.keep is not None else work / "reports"
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = [f"# collective ledger {' vs '.join(args.modes)}, {now}", f"ours and torch: {our_harness()}", ""]
    print("\n".join(head), flush=True)
    results = []
    for path in args.files:
        if not sbs.runnable(path):
            continue
        runs = {}
        for mode in args.modes:
            runs[mode] = run_mode(copies, path.name, mode, args.timeout, out)
            print(f"{mode:6} {path.name}: exit {runs[mode].status}, {runs[mode].seconds:.1f} s, "
                  f"{len(runs[mode].tests)} tests reported", flush=True)
        results.append((path.name, runs))
    lines, same = table(results, args.modes)
    print("\n" + "\n".join(lines))
    if args.keep is not None:
        with open(out / "tables.md", "a") as kept:  # one table per run, appended
            kept.write("\n".join(head + lines) + "\n\n")
        print(f"\nreports and logs kept in {out}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
