"""Upstream test files on PyTorch's own harness and, migrated, on ours: outcomes and wall time.

Give it PyTorch test files (for example copies of ``test/distributed/test_join.py`` read from
``pytorch/pytorch``; they are never copied into this repository). It copies them twice into a
temporary directory, rewrites one copy with ``python -m torch_testing_ext.migrate``, then runs
every copied file that has a ``__main__`` block, on each side in turn (upstream first), as
``python FILE -v``. Files without one are copied as the others' helpers (``test_c10d_spawn.py``
for ``test_c10d_spawn_gloo.py``). It prints one table row per file: tests passed, skipped and
failed on each harness, wall time of each, the speed-up, and how many tests ended differently
(each difference is listed below the table)::

    python benchmarks/side_by_side.py /tmp/upstream/test_*.py
    python benchmarks/side_by_side.py /tmp/upstream/test_join.py --keep   # keep the copies and logs

Files that read their setting from the environment, as upstream's CI gives it, get it with
``--env NAME=VALUE``; ``--dist-temp-dir`` gives each run what upstream's ``run_test.py`` gives
the distributed suites (a fresh ``TEMP_DIR`` with ``barrier/`` and ``test_dir/``, and
``INIT_METHOD`` on a file in it)::

    python benchmarks/side_by_side.py /tmp/upstream/test_distributed_spawn.py \
        --env BACKEND=gloo --env WORLD_SIZE=2 --dist-temp-dir

A downstream project's test helpers often live in its installed package and import
``torch.testing._internal`` too (``torchao.testing``, ``spmd_types._test_utils``). ``--package DIR``
(an installed package's directory, repeatable) copies that package beside the files on each
side, where it comes first on the path; the ours side's copy is migrated with the files, as a
project migrating its tests migrates its helpers::

    python benchmarks/side_by_side.py /tmp/torchao/test/test_ops.py \
        --package /tmp/venv/lib/python3.11/site-packages/torchao

Exit status: 0 when every file ended the same way on both, 1 otherwise, 2 on bad arguments.
``benchmarks/ledger_side_by_side.py`` runs the same copies on our harness only, with the
collective ledger on and off, and compares each test's outcome from JUnit XML.
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
from collections.abc import Mapping, Sequence
from pathlib import Path

HEADER = re.compile(r"^(test\w*) \(([\w.]+)\)")
VERDICT = re.compile(r"(?:\.\.\. ?|^)(ok|skipped .*|FAIL|ERROR|expected failure|unexpected success)\s*$")
PASSED, SKIPPED, FAILED = "passed", "skipped", "failed"


def outcomes(verbose_output: str) -> dict[str, str]:
    """``{"Class.test": "ok" | "skipped 'why'" | ...}`` from unittest's ``-v`` output."""
    found: dict[str, str] = {}
    current = None
    for line in verbose_output.splitlines():
        header = HEADER.match(line)
        if header:
            dotted = header.group(2).split(".")
            test_class = dotted[-2] if dotted[-1] == header.group(1) else dotted[-1]
            current = f"{test_class}.{header.group(1)}"
        verdict = VERDICT.search(line)
        if verdict and current and current not in found:
            found[current] = verdict.group(1)
    return found


def kind(verdict: str) -> str:
    if verdict in ("ok", "expected failure"):
        return PASSED
    return SKIPPED if verdict.startswith("skipped") else FAILED


@dataclasses.dataclass
class SideRun:
    """One file run on one harness."""

    status: int
    seconds: float
    tests: dict[str, str]
    log: Path

    def count(self, which: str) -> int:
        return sum(kind(v) == which for v in self.tests.values())

    def cells(self) -> list[str]:
        failed = self.count(FAILED) + (1 if self.status and not self.count(FAILED) else 0)
        return [str(self.count(PASSED)), str(self.count(SKIPPED)), str(failed), f"{self.seconds:.1f} s"]


def run_file(directory: Path, name: str, timeout: float, log: Path, *, args: Sequence[str] = (),
             env: Mapping[str, str] | None = None) -> SideRun:
    """``python NAME -v [args]`` in ``directory`` (with ``env`` added to this environment), its
    output in ``log``; each test's outcome read from that output."""
    started = time.monotonic()
    with open(log, "w") as out:
        try:
            status = subprocess.run([sys.executable, name, "-v", *args], cwd=directory, stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env={**os.environ, **env} if env else None, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            status = -1
            out.write(f"\nside_by_side.py: timed out after {timeout:g} s\n")
    seconds = time.monotonic() - started
    return SideRun(status, seconds, outcomes(log.read_text(errors="replace")), log)


def runnable(path: Path) -> bool:
    return re.search(r"^if __name__ == ['\"]__main__['\"]", path.read_text(errors="replace"), re.M) is not None


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="upstream test files (and their helpers)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per file and side")
    parser.add_argument("--keep", action="store_true", help="keep the copies and the logs")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="set NAME=VALUE for both sides' runs (repeatable)")
    parser.add_argument("--package", action="append", default=[], type=Path, metavar="DIR",
                        help="copy this package beside the files on each side, migrated on ours (repeatable)")
    parser.add_argument("--dist-temp-dir", action="store_true",
                        help="give every run a fresh TEMP_DIR (barrier/, test_dir/) and INIT_METHOD in it")
    args = parser.parse_args(argv)
    check_files(parser, args.files)
    for package in args.package:
        if not (package / "__init__.py").is_file():
            parser.error(f"--package {package}: not a package directory")
    args.env = dict(check_env(parser, item) for item in args.env)
    return args


def check_env(parser: argparse.ArgumentParser, item: str) -> tuple[str, str]:
    """``NAME=VALUE`` as a pair, or ``parser.error``."""
    name, equals, value = item.partition("=")
    if not equals or not re.fullmatch(r"[A-Za-z_]\w*", name):
        parser.error(f"--env {item!r}: expected NAME=VALUE")
    return name, value


def dist_temp_dir(parent: Path) -> tuple[Path, dict[str, str]]:
    """A fresh directory as upstream's ``run_test.py`` makes for a distributed suite, and the
    variables that point at it."""
    root = Path(tempfile.mkdtemp(prefix="dist-", dir=parent))
    (root / "barrier").mkdir()
    (root / "test_dir").mkdir()
    return root, {"TEMP_DIR": str(root), "INIT_METHOD": f"file://{root}/init"}


def check_files(parser: argparse.ArgumentParser, files: Sequence[Path]) -> None:
    """Refuse (``parser.error``) what is not a Python file, and two files of one name."""
    for path in files:
        if path.suffix != ".py" or not path.is_file():
            parser.error(f"not a Python file: {path}")
    if len({p.name for p in files}) != len(files):
        parser.error("two files share a name")


def prepare_sides(work: Path, files: Sequence[Path], packages: Sequence[Path]) -> dict[str, Path] | None:
    """``work/upstream`` and ``work/ours``, each with a copy of ``files`` and of ``packages``
    (without ``__pycache__``), the ours copy migrated; None (and a line on stderr) if the
    migration failed."""
    sides = {"upstream": work / "upstream", "ours": work / "ours"}
    for directory in sides.values():
        directory.mkdir()
        for path in files:
            shutil.copy(path, directory / path.name)
        for package in packages:
            shutil.copytree(package, directory / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    migrated = subprocess.run([sys.executable, "-m", "torch_testing_ext.migrate", str(sides["ours"])],
                              capture_output=True, text=True)
    if migrated.returncode:
        print(f"side_by_side.py: migrate failed: {migrated.stdout}{migrated.stderr}", file=sys.stderr)
        return None
    return sides


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="side_by_side-"))
    sides = prepare_sides(work, args.files, args.package)
    if sides is None:
        return 1
    rows, differences = [], []
    total = {side: 0.0 for side in sides}
    for path in args.files:
        if not runnable(path):
            continue
        runs = {}
        for side, directory in sides.items():
            env = dict(args.env)
            temp = None
            if args.dist_temp_dir:
                temp, dist_env = dist_temp_dir(work)
                env.update(dist_env)
            runs[side] = run_file(directory, path.name, args.timeout, work / f"{side}-{path.stem}.log", env=env)
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)
            print(f"{side:8} {path.name}: exit {runs[side].status}, {runs[side].seconds:.1f} s", flush=True)
            total[side] += runs[side].seconds
        upstream, ours = runs["upstream"], runs["ours"]
        differ = sorted(t for t in upstream.tests.keys() | ours.tests.keys()
                        if kind(upstream.tests.get(t, "missing")) != kind(ours.tests.get(t, "missing")))
        differences += [f"{path.name} {t}: upstream {upstream.tests.get(t, 'missing')!s:.80}; "
                        f"ours {ours.tests.get(t, 'missing')!s:.80}" for t in differ]
        speedup = upstream.seconds / ours.seconds if ours.seconds else float("inf")
        same = (not differ) and (upstream.status == 0) == (ours.status == 0)
        rows.append([path.name, str(len(upstream.tests)), *upstream.cells(), *ours.cells(),
                     f"{speedup:.1f}x", "yes" if same else f"no ({len(differ)})"])
    header = ["file", "tests", "upstream pass", "skip", "fail", "wall", "ours pass", "skip", "fail",
              "wall", "speed-up", "same outcomes"]
    print("\n| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\ntotal wall: upstream {total['upstream']:.1f} s, ours {total['ours']:.1f} s "
          f"({total['upstream'] / total['ours'] if total['ours'] else float('inf'):.1f}x); "
          f"torch {torch_version()}")
    if differences:
        print("\nTests that ended differently:\n" + "\n".join(differences))
    if args.keep:
        print(f"\ncopies and logs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(row[-1] == "yes" for row in rows) else 1


def torch_version() -> str:
    return subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
