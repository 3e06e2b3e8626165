"""Sweep a tree of upstream test files with the migration check: which names each file lacks here.

Give it a directory of PyTorch test files (for example copies of ``test/distributed/`` read from
``pytorch/pytorch`` into ``/tmp``; they are never copied into this repository). For every test
file (``test_*.py`` or ``*_test.py``; other files are the tests' helpers) it asks the migration
tool's check (``torch_testing_ext.migrate``: the names a file imports or uses from
``torch.testing._internal`` or ``torch._dynamo.test_case``, and which of them we do not
provide) and prints, per file, the names missing and a heuristic CPU column, then the totals:
files, files whose imports all resolve, and every missing name with the number of files that
need it, most needed first (the names that unlock most files)::

    python benchmarks/migration_sweep.py /tmp/upstream-distributed
    python benchmarks/migration_sweep.py /tmp/upstream-distributed --jobs 2 > /tmp/sweep.txt
    python benchmarks/migration_sweep.py /tmp/upstream-distributed --files-from list.txt --run

``--run`` also runs each selected file side by side, with ``benchmarks/side_by_side.py``'s
steps (its functions are imported, not copied): the file's directory is copied twice into a
temporary directory, one copy migrated, and the file run on each side in turn (upstream first)
as ``python FILE -v``; each test's outcome is read from unittest's verbose output (torch's
``run_tests`` takes ``--save-xml`` only with ``xmlrunner`` installed, so both sides are read
the same way). It prints passed / skipped / failed on each side, both walls, the speed-up and
whether every test ended the same way, then lists the tests that did not.

The CPU column is a heuristic over the file's text: ``cpu`` when it names gloo, a ``"cpu"``
device, a threaded world, a fake group or the DTensor/FSDP bases (which run on CPU ranks here),
``no backend`` when it names no backend and no accelerator at all, ``accelerator`` when it
names only nccl/xccl/CUDA/GPU counts. The first two are the CPU-meaningful files.

The header says when (UTC), which upstream commit (``--upstream-commit``, else the first line
of ``DIR/UPSTREAM_COMMIT``, else the directory's git ``HEAD``), which torch and which commit of
this repository. Progress goes to stderr; the exit status is 0 (2 on bad arguments): figures
only, nothing is asserted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
import importlib.util
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OURS = "torch_testing_ext"
UPSTREAM = {  # our module path -> upstream's, longest first
    f"{OURS}.dynamo_test_case": "torch._dynamo.test_case",
    OURS: "torch.testing._internal",
}
TEST_FILE = re.compile(r"^(test_\w*|\w+_test)\.py$")

# (label, pattern) pairs; the first group makes a file CPU-meaningful, the second names accelerators.
CPU_SIGNALS = [
    ("gloo", r"\bgloo\b"),
    ("cpu device", r"""["']cpu["']"""),
    ("threaded", r"\bMultiThreadedTestCase\b|\bspawn_threads_and_init_comms\b|\bFSDPTestMultiThread\b"
                 r"|\b_install_threaded_pg\b|[\"']threaded[\"']"),
    ("fake pg", r"\bFakeStore\b|\bfake_pg\b|[\"']fake[\"']"),
    ("DTensor base", r"\b(?:Local)?DTensor(?:Op|Continuous)?TestBase\b|\bwith_comms\b"),
    ("FSDP base", r"\bFSDPTest(?:Continuous)?\b"),
]
ACCELERATOR_SIGNALS = [
    ("nccl", r"nccl"),
    ("xccl", r"xccl"),
    ("cuda", r"\bcuda\b|\.cuda\(|TEST_CUDA\b"),
    ("gpu count", r"\bskip_if_lt_x_gpu\b|\bTEST_MULTIGPU\b|\bskip_if_no_gpu\b|\bdevice_count\(\)"),
]
CPU_KINDS = ("cpu", "no backend")
# A test gated to accelerators by a decorator, and a file that leaves at import without one.
TEST_DEF = r"^\s*(?:async\s+)?def test_"
GPU_GATE = (r"^\s*@(?:skip_if_lt_x_gpu|requires_nccl|requires_nccl_version|skip_if_no_gpu|requires_cuda"
            r"|requires_accelerator_dist_backend|requires_multicast_support|with_nvshmem"
            r"|(?:unittest\.)?skipIf\(\s*not\s+\(?(?:TEST_CUDA|TEST_MULTIGPU|HAS_GPU|TEST_XPU"
            r"|torch\.cuda\.is_available\(\)|at_least_x_gpu)"
            r"|skip_but_pass_in_sandcastle_if\(\s*not\s+(?:TEST_CUDA|TEST_MULTIGPU))")
GPU_EXIT = (r"^if\s+not\s+\(?(?:TEST_CUDA|TEST_MULTIGPU|torch\.cuda\.is_available\(\)|dist\.is_nccl_available\(\)"
            r"|c10d\.is_nccl_available\(\))[^\n]*:\s*\n(?:\s+[^\n]*\n)*?\s+sys\.exit"
            r"|current_accelerator\(\) is None[^\n]*:\s*\n(?:\s+[^\n]*\n)*?\s+sys\.exit")


@dataclasses.dataclass
class FileCheck:
    """One test file: what the migration check found in it, and its CPU column."""

    path: str  # relative to the swept directory, with "/"
    missing: list[str]  # our dotted paths, sorted (torch_testing_ext.common_utils.Foo)
    kind: str  # "cpu" | "no backend" | "accelerator" ("unknown": the file could not be read)
    signals: list[str]
    error: str | None = None  # the file could not be read or parsed

    @property
    def resolves(self) -> bool:
        return self.error is None and not self.missing

    @property
    def cpu_meaningful(self) -> bool:
        return self.kind in CPU_KINDS


def upstream_name(ours: str) -> str:
    """``torch_testing_ext.common_utils.X`` -> ``torch.testing._internal.common_utils.X``."""
    for prefix, upstream in UPSTREAM.items():
        if ours == prefix or ours.startswith(prefix + "."):
            return upstream + ours[len(prefix):]
    return ours


def short_name(ours: str) -> str:
    """``torch_testing_ext.common_utils.X`` -> ``common_utils.X`` (module.name)."""
    return ours[len(OURS) + 1:] if ours.startswith(OURS + ".") else ours


def _decorators(lines: list[str], index: int) -> str:
    """The decorator lines right above ``lines[index]`` (up to a blank line or other code)."""
    above = []
    for line in reversed(lines[:index]):
        stripped = line.strip()
        if not stripped or stripped.startswith(("def ", "async def ", "class ", "#")) or stripped.endswith(":"):
            break
        above.append(line)
    return "\n".join(reversed(above))


def gated_tests(text: str) -> tuple[int, int]:
    """``(tests, tests gated to accelerators)``: a test is gated by a gate among its own
    decorators or its top-level class's."""
    lines = text.splitlines()
    tests = gated = 0
    class_gated = False
    for index, line in enumerate(lines):
        if line.startswith("class "):
            class_gated = re.search(GPU_GATE, _decorators(lines, index), re.M) is not None
        elif re.match(TEST_DEF, line):
            tests += 1
            gated += class_gated or re.search(GPU_GATE, _decorators(lines, index), re.M) is not None
    return tests, gated


def classify(text: str) -> tuple[str, list[str]]:
    """The CPU column of a file's text: its kind and the signals that decided it. A file whose
    every test carries an accelerator gate (``skip_if_lt_x_gpu``, ``requires_nccl``, ...), or
    that exits at import without CUDA or an accelerator, is ``accelerator`` whatever it names."""
    tests, gated = gated_tests(text)
    if re.search(GPU_EXIT, text, re.M):
        return "accelerator", ["exits without an accelerator"]
    if tests and gated >= tests:
        return "accelerator", [f"every test GPU-gated ({tests})"]
    cpu = [label for label, pattern in CPU_SIGNALS if re.search(pattern, text)]
    if cpu:
        return "cpu", cpu + ([f"{gated}/{tests} tests GPU-gated"] if gated else [])
    accelerator = [label for label, pattern in ACCELERATOR_SIGNALS if re.search(pattern, text)]
    return ("accelerator", accelerator) if accelerator else ("no backend", [])


def test_files(root: Path, only: Sequence[str] | None = None) -> list[str]:
    """The test files under ``root`` (relative, sorted), or those of ``only`` (relative or not)."""
    if only is not None:
        found = []
        for name in only:
            path = Path(name) if Path(name).is_absolute() else root / name
            found.append(path.resolve().relative_to(root.resolve()).as_posix())
        return found
    found = []
    for parent, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        found += [(Path(parent) / f).relative_to(root).as_posix() for f in sorted(files) if TEST_FILE.match(f)]
    return found


def check_file(root: str, relative: str) -> FileCheck:
    """The migration check on one file (imports the tool on first use, in this process)."""
    from torch_testing_ext._engine.migrate.availability import missing_names
    from torch_testing_ext._engine.migrate.name_references import references
    from torch_testing_ext._engine.migrate.source_files import SourceError, load

    path = os.path.join(root, relative)
    kind, signals = "unknown", list[str]()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            kind, signals = classify(f.read())
        [source] = load([path])
    except (OSError, SourceError) as error:
        return FileCheck(relative, [], kind, signals, error=" ".join(str(error).split()))
    missing = sorted({name for _, name in missing_names(references(source.module))})
    return FileCheck(relative, missing, kind, signals)


def check_all(root: Path, files: Sequence[str], jobs: int) -> list[FileCheck]:
    """``check_file`` on every file, ``jobs`` processes at a time, progress on stderr."""
    results: dict[str, FileCheck] = {}

    def done(result: FileCheck) -> None:
        results[result.path] = result
        said = "error" if result.error else f"{len(result.missing)} missing" if result.missing else "ok"
        print(f"[{len(results)}/{len(files)}] {result.path}: {said}", file=sys.stderr, flush=True)

    if jobs <= 1:
        for relative in files:
            done(check_file(str(root), relative))
    else:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
            futures = [pool.submit(check_file, str(root), relative) for relative in files]
            for future in concurrent.futures.as_completed(futures):
                done(future.result())
    return [results[relative] for relative in files]


@dataclasses.dataclass
class NameNeed:
    name: str  # ours
    files: list[str]
    alone: int  # files for which this is the only missing name


def name_needs(checks: Iterable[FileCheck]) -> list[NameNeed]:
    """Every missing name with the files needing it: most files first, then by name."""
    needs: dict[str, NameNeed] = {}
    for check in checks:
        for name in check.missing:
            need = needs.setdefault(name, NameNeed(name, [], 0))
            need.files.append(check.path)
            need.alone += len(check.missing) == 1
    return sorted(needs.values(), key=lambda n: (-len(n.files), -n.alone, n.name))


def upstream_has(names: Sequence[str]) -> dict[str, bool]:
    """Which upstream dotted names the installed torch provides (asked in a fresh interpreter,
    so upstream's harness is never imported into this one)."""
    if not names:
        return {}
    probe = (
        "import importlib, json, sys\n"
        "sys.argv = sys.argv[:1]\n"  # common_utils parses the command line on import
        "found = {}\n"
        "for name in json.loads(sys.stdin.read()):\n"
        "    module, _, attr = name.rpartition('.')\n"
        "    try:\n"
        "        found[name] = hasattr(importlib.import_module(module), attr)\n"
        "    except Exception:\n"
        "        found[name] = False\n"
        "print(json.dumps(found))\n")
    done = subprocess.run([sys.executable, "-c", probe], input=json.dumps(list(names)), capture_output=True,
                          text=True, cwd=tempfile.gettempdir())
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        print(f"migration_sweep.py: could not ask torch about its names: {done.stderr[-500:]}", file=sys.stderr)
        return {}


def _git(*args: str, cwd: Path) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def upstream_commit(root: Path, given: str | None) -> str:
    if given:
        return given
    marker = root / "UPSTREAM_COMMIT"
    if marker.is_file():
        lines = marker.read_text(errors="replace").splitlines()
        if lines:
            return lines[0].strip()
    return _git("rev-parse", "HEAD", cwd=root) or "unknown"


def our_commit() -> str:
    commit = _git("rev-parse", "HEAD", cwd=ROOT) or "unknown"
    if _git("status", "--porcelain", "--", OURS, cwd=ROOT):
        commit += f" ({OURS}/ modified in the work tree)"
    return commit


def torch_version() -> str:
    done = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "not importable"


def header(root: Path, commit: str | None) -> list[str]:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [f"# migration sweep of {root}", f"date: {now}", f"upstream commit: {upstream_commit(root, commit)}",
            f"torch: {torch_version()}", f"ours: {our_commit()}"]


def report(checks: Sequence[FileCheck], has: dict[str, bool] | None = None) -> list[str]:
    """The per-file lines and the totals, as printed."""
    has = has or {}
    width = max((len(c.path) for c in checks), default=10)
    lines = ["", "## per file (missing names as module.name of torch.testing._internal)", ""]
    for check in checks:
        column = f"{check.kind}" + (f" ({', '.join(check.signals)})" if check.signals else "")
        found = (f"error: {check.error}" if check.error else
                 "missing: " + ", ".join(short_name(n) for n in check.missing) if check.missing else "ok")
        lines.append(f"{check.path:<{width}}  {column:<44}  {found}")
    needs = name_needs(checks)
    resolving = [c for c in checks if c.resolves]
    cpu_resolving = [c for c in resolving if c.cpu_meaningful]
    lines += [
        "", "## totals", "",
        f"test files: {len(checks)}",
        f"files whose imports all resolve: {len(resolving)}",
        f"CPU-meaningful files: {sum(c.cpu_meaningful for c in checks)}, of which resolve: {len(cpu_resolving)}",
        f"files that could not be read or parsed: {sum(c.error is not None for c in checks)}",
        f"distinct names missing: {len(needs)}",
        "", "## missing names, by files needing each", "",
        "| files | files it alone blocks | name (module.name) | upstream path | in the installed torch |",
        "|---|---|---|---|---|",
    ]
    for need in needs:
        upstream = upstream_name(need.name)
        present = "?" if upstream not in has else "yes" if has[upstream] else "no"
        lines.append(f"| {len(need.files)} | {need.alone} | {short_name(need.name)} | {upstream} | {present} |")
    modules: dict[str, set[str]] = {}
    for need in needs:
        modules.setdefault(need.name.rpartition(".")[0], set()).update(need.files)
    lines += ["", "## the same by module: files needing any name of it", "",
              "| files | module | names missing |", "|---|---|---|"]
    for module, files in sorted(modules.items(), key=lambda m: (-len(m[1]), m[0])):
        names = sum(n.name.rpartition(".")[0] == module for n in needs)
        lines.append(f"| {len(files)} | {upstream_name(module)} | {names} |")
    lines += ["", "## CPU-meaningful files whose imports all resolve", ""]
    lines += [f"{c.path}  ({c.kind}{': ' + ', '.join(c.signals) if c.signals else ''})" for c in cpu_resolving]
    return lines


def _side_by_side() -> ModuleType:
    """``benchmarks/side_by_side.py`` as a module (the benchmarks are scripts, not a package)."""
    if "side_by_side" not in sys.modules:
        spec = importlib.util.spec_from_file_location("side_by_side", HERE / "side_by_side.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules["side_by_side"]


def run_side_by_side(root: Path, files: Sequence[str], timeout: float, keep: bool) -> list[str]:
    """Each file run on upstream's harness and, migrated, on ours: one table row per file."""
    sbs = _side_by_side()
    work = Path(tempfile.mkdtemp(prefix="migration_sweep-"))
    rows, differences, not_run = [], [], []
    total = {"upstream": 0.0, "ours": 0.0}
    for index, relative in enumerate(files):
        source = root / relative
        if not sbs.runnable(source):
            not_run.append(relative)
            continue
        sides = {side: work / str(index) / side for side in ("upstream", "ours")}
        for directory in sides.values():  # the file's own folder: its helpers come along
            directory.mkdir(parents=True)
            for sibling in source.parent.glob("*.py"):
                shutil.copy(sibling, directory / sibling.name)
        migrated = subprocess.run([sys.executable, "-m", "torch_testing_ext.migrate", str(sides["ours"])],
                                  capture_output=True, text=True)
        if migrated.returncode:
            print(f"{relative}: migrate failed: {(migrated.stdout + migrated.stderr).strip()}", file=sys.stderr)
            not_run.append(relative)
            continue
        runs = {}
        for side, directory in sides.items():
            runs[side] = sbs.run_file(directory, source.name, timeout, work / str(index) / f"{side}.log")
            total[side] += runs[side].seconds
            print(f"[{index + 1}/{len(files)}] {side:8} {relative}: exit {runs[side].status}, "
                  f"{runs[side].seconds:.1f} s", file=sys.stderr, flush=True)
        upstream, ours = runs["upstream"], runs["ours"]
        differ = sorted(t for t in upstream.tests.keys() | ours.tests.keys()
                        if sbs.kind(upstream.tests.get(t, "missing")) != sbs.kind(ours.tests.get(t, "missing")))
        differences += [f"{relative} {t}: upstream {upstream.tests.get(t, 'missing')!s:.80}; "
                        f"ours {ours.tests.get(t, 'missing')!s:.80}" for t in differ]
        speedup = upstream.seconds / ours.seconds if ours.seconds else float("inf")
        same = not differ and (upstream.status == 0) == (ours.status == 0)
        rows.append([relative, str(len(upstream.tests)), *upstream.cells(), *ours.cells(), f"{speedup:.1f}x",
                     "yes" if same else f"no ({len(differ)})"])
    names = ["file", "tests", "upstream pass", "skip", "fail", "wall", "ours pass", "skip", "fail", "wall",
             "speed-up", "same outcome per test"]
    lines = ["", "## side by side (python FILE -v on each harness)", "",
             "| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    ratio = total["upstream"] / total["ours"] if total["ours"] else float("inf")
    lines.append(f"\ntotal wall: upstream {total['upstream']:.1f} s, ours {total['ours']:.1f} s ({ratio:.1f}x)")
    if not_run:
        lines.append("not run (no __main__ block, or the migration failed): " + ", ".join(not_run))
    if differences:
        lines += ["", "tests that ended differently:", *differences]
    if keep:
        lines.append(f"\ncopies and logs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return lines


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="a directory of upstream test files (e.g. test/distributed)")
    parser.add_argument("--files-from", type=Path, metavar="LIST",
                        help="only these files: one path a line (relative to the directory), # comments")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="check N files at a time (default 1)")
    parser.add_argument("--run", action="store_true", help="also run each file on both harnesses")
    parser.add_argument("--timeout", type=float, default=1800.0, help="--run: seconds per file and side")
    parser.add_argument("--keep", action="store_true", help="--run: keep the copies and the logs")
    parser.add_argument("--upstream-commit", metavar="TEXT", help="the commit the files are from, for the header")
    args = parser.parse_args(argv)
    if not args.directory.is_dir():
        parser.error(f"not a directory: {args.directory}")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    args.only = None
    if args.files_from is not None:
        try:
            text = args.files_from.read_text()
        except OSError as error:
            parser.error(f"cannot read {args.files_from}: {error.strerror or error}")
        args.only = [s for line in text.splitlines() if (s := line.split("#", 1)[0].strip())]
        absent = [name for name in args.only
                  if not (Path(name) if Path(name).is_absolute() else args.directory / name).is_file()]
        if absent:
            parser.error(f"not files under {args.directory}: {', '.join(absent)}")
    return args


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    root = args.directory
    files = test_files(root, args.only)
    lines = header(root, args.upstream_commit)
    checks = check_all(root, files, args.jobs)
    has = upstream_has([upstream_name(n.name) for n in name_needs(checks)])
    lines += report(checks, has)
    print("\n".join(lines), flush=True)
    if args.run:
        print("\n".join(run_side_by_side(root, files, args.timeout, args.keep)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
