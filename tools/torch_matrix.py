"""Run the suite on several torch releases, each in a fresh virtual environment.

For each version: copy the committed tree (``git archive`` of the commit HEAD names at the
start, so neither working-tree edits nor commits made meanwhile count), make a venv, install as
README.md's quick start says (``pip install torch==V``, then ``pip install -e ".[test]"``), run
``python run_test.py --continue-through-error`` and read its closing ``summary:`` line. Then
print a markdown table::

    python tools/torch_matrix.py                             # 2.13.0, 2.14.1 and 2.15.0
    python tools/torch_matrix.py --versions 2.15.0 --keep --work-dir /tmp
    python tools/torch_matrix.py --versions 2.14.1 2.15.0 --version-sensitive

``--version-sensitive`` runs only :data:`VERSION_SENSITIVE`, the self-tests whose subject moves
with the torch release (``.ci/run`` runs them on every release we claim besides the one the
README installs).

Only the standard library is used: run it with any Python 3.10+; each venv is made with the
Python that runs this script. The venvs go into a new directory under ``--work-dir`` (default:
the system temp dir); each version's venv is removed after its run, and that directory at the
end, unless ``--keep``.

Where pip's configured constraints cap torch below V (as on a machine whose pip.conf names a
constraints file with ``torch<=2.14.1``), the torch install alone runs with
``PIP_CONSTRAINT=/dev/null``. The project is installed with ``PIP_CONSTRAINT`` naming a file
that pins ``torch==V``, so pip can neither upgrade nor downgrade torch; the installed version
is checked afterwards all the same.

Exit status: 0 when every version installed and passed, 1 otherwise, 2 on bad arguments.
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
from pathlib import Path
from typing import NoReturn

DEFAULT_VERSIONS = ("2.13.0", "2.14.1", "2.15.0")
ROOT = Path(__file__).resolve().parents[1]
#: The self-tests whose subject moves with the torch release, as the driver names them: test ids
#: and the refusals of odd names, every private torch access's contract, the upstream-named faces
#: and the suites torch ships loaded on our harness, and the migration's rewrite and check.
VERSION_SENSITIVE = (
    "harness/test_torch_private",
    "harness/testcase/test_upstream_ids",
    "harness/testcase/test_parametrize",
    "harness/device_type/test_device_instantiation",
    "harness/distributed/test_distributed_faces",
    "harness/distributed_bases/test_shipped_suites",
    "harness/test_imports",
    "harness/test_public_api",
    "harness/test_long_tail_names",
    "harness/migrate/test_source_rewrite",
    "harness/migrate/test_migrate_cli",
    "harness/migrate/test_migration_doc",
)
SUMMARY = re.compile(r"^summary: (\d+) passed, (\d+) failed, (\d+) skipped\b", re.M)


class UsageError(Exception):
    """Bad arguments: one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


@dataclasses.dataclass
class Outcome:
    """What one torch version gave."""

    version: str
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    install_seconds: float = 0.0
    run_seconds: float = 0.0
    problem: str = ""  # empty when the version installed and every test passed

    def row(self) -> str:
        def count(n: int | None) -> str:
            return "-" if n is None else str(n)

        minutes = f"{self.run_seconds / 60:.1f}" if self.run_seconds else "-"
        return (f"| {self.version} | {count(self.passed)} | {count(self.failed)} | "
                f"{count(self.skipped)} | {minutes} | {self.install_seconds / 60:.1f} | "
                f"{self.problem or 'ok'} |")


def release(version: str) -> tuple[int, ...]:
    """(2, 15, 0) for "2.15.0" or "2.15.0+cpu"."""
    match = re.match(r"\d+(\.\d+)*", version)
    return tuple(int(part) for part in match.group().split(".")) if match else ()


def torch_cap(python: Path) -> tuple[int, ...] | None:
    """The highest torch release pip's configured constraint files allow (``torch<=X`` or
    ``torch==X``), or None when they do not cap torch."""
    listing = subprocess.run([str(python), "-m", "pip", "config", "list"],
                             capture_output=True, text=True).stdout
    env = re.findall(r"^:env:\.constraint='([^']*)'$", listing, re.M)  # PIP_CONSTRAINT wins
    values = env or re.findall(r"^\S+\.constraint='([^']*)'$", listing, re.M)
    caps = []
    for name in " ".join(values).split():
        try:
            text = Path(name).read_text()
        except OSError:
            continue
        caps += [release(v) for v in re.findall(r"^\s*torch\s*(?:<=|==)\s*([\w.+]+)", text, re.M)]
    return min(caps, default=None)


def run(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
        log: Path | None = None) -> tuple[int, str]:
    """Run ``command``, streaming its output here (and into ``log``); return (status, output)."""
    print("+ " + " ".join(command), flush=True)
    lines = []
    with subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace") as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            lines.append(line)
    output = "".join(lines)
    if log is not None:
        log.write_text(output)
    return process.returncode, output


def copy_committed_tree(source: Path, commit: str, destination: Path) -> None:
    """Extract ``commit`` of the checkout ``source`` (not its working tree) into ``destination``."""
    destination.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(source), "archive", commit], check=True,
                             stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive, check=True)


def venv_env(venv: Path) -> dict[str, str]:
    """The environment of an activated ``venv``, with nothing leaking in from PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def install(version: str, work: Path, src: Path, python: Path, env: dict[str, str]) -> str:
    """Install torch ``version`` and the project into the venv; return a problem or ""."""
    cap = torch_cap(python)
    torch_env = dict(env)
    if cap is not None and release(version) > cap:
        print(f"pip's constraints cap torch at {'.'.join(map(str, cap))}: "
              f"lifting the cap for the torch install only", flush=True)
        torch_env["PIP_CONSTRAINT"] = "/dev/null"
    status, _ = run([str(python), "-m", "pip", "install", f"torch=={version}"], env=torch_env)
    if status:
        return f"torch install failed (exit {status})"
    pin = work / "torch-pin.txt"
    pin.write_text(f"torch=={version}\n")
    status, _ = run([str(python), "-m", "pip", "install", "-e", ".[test]"], cwd=src,
                    env={**env, "PIP_CONSTRAINT": str(pin)})
    if status:
        return f"project install failed (exit {status})"
    found = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"],
                           env=env, capture_output=True, text=True).stdout.strip()
    if release(found) != release(version):
        return f"torch {found or '(not importable)'} installed, not {version}"
    return ""


def try_version(version: str, work: Path, source: Path, commit: str,
                selection: tuple[str, ...] = ()) -> Outcome:
    """Install and run the suite (only the test files ``selection`` names, if any) for one torch
    version in ``work``."""
    outcome = Outcome(version)
    src, venv, reports = work / "src", work / "venv", work / "test-reports"
    print(f"\n===== torch {version}: {work} =====", flush=True)
    started = time.monotonic()
    copy_committed_tree(source, commit, src)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python, env = venv / "bin" / "python", venv_env(venv)
    outcome.problem = install(version, work, src, python, env)
    outcome.install_seconds = time.monotonic() - started
    if outcome.problem:
        return outcome
    started = time.monotonic()
    command = [str(python), "run_test.py", "--continue-through-error", "--save-xml", str(reports)]
    if selection:
        command += ["-j", "2", "-i", *selection]
    status, output = run(command, env=env, cwd=src, log=work / "run.log")
    outcome.run_seconds = time.monotonic() - started
    summaries = SUMMARY.findall(output)
    if not summaries:
        outcome.problem = f"no summary line (exit {status})"
        return outcome
    outcome.passed, outcome.failed, outcome.skipped = map(int, summaries[-1])
    if outcome.failed:
        outcome.problem = "tests failed"
    elif status:
        outcome.problem = f"run_test.py exit {status}"
    return outcome


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="+", default=list(DEFAULT_VERSIONS), metavar="V",
                        help=f"torch releases to try (default: {' '.join(DEFAULT_VERSIONS)})")
    parser.add_argument("--work-dir", type=Path, metavar="DIR",
                        help="where the venvs go (default: the system temp dir)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the venvs, source copies, logs and reports")
    parser.add_argument("--version-sensitive", action="store_true",
                        help="run only the self-tests whose subject moves with the torch release "
                             "(VERSION_SENSITIVE), two files at a time")
    parser.add_argument("--source", type=Path, default=ROOT, metavar="DIR",
                        help="the git checkout whose HEAD is tested (default: this repository)")
    args = parser.parse_args(argv)
    bad = [v for v in args.versions if not re.fullmatch(r"\d+\.\d+(\.\d+)?", v)]
    if bad:
        raise UsageError(f"not a torch release: {bad[0]!r} (expected e.g. 2.15.0)")
    if len(set(args.versions)) != len(args.versions):
        raise UsageError("a version is given twice")
    if args.work_dir is not None and not args.work_dir.is_dir():
        raise UsageError(f"--work-dir: no such directory: {args.work_dir}")
    head = subprocess.run(["git", "-C", str(args.source), "rev-parse", "--verify", "HEAD"],
                          capture_output=True, text=True)
    if head.returncode:
        raise UsageError(f"--source: not a git checkout with a commit: {args.source}")
    args.commit = head.stdout.strip()
    return args


def main(argv: list[str]) -> int:
    try:
        args = parse_args(argv)
    except UsageError as error:
        print(f"torch_matrix.py: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="torch-matrix-", dir=args.work_dir))
    outcomes = []
    try:
        for version in args.versions:
            work = root / f"torch-{version}"
            outcomes.append(try_version(version, work, args.source.resolve(), args.commit,
                                        VERSION_SENSITIVE if args.version_sensitive else ()))
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    what = "the version-sensitive self-tests" if args.version_sensitive else "the whole suite"
    print(f"\ntorch matrix of {args.commit[:12]} ({what}), Python {sys.version.split()[0]}"
          + (f", kept in {root}" if args.keep else "") + "\n")
    print("| torch | passed | failed | skipped | minutes | install minutes | result |")
    print("|---|---|---|---|---|---|---|")
    for outcome in outcomes:
        print(outcome.row())
    return 1 if any(outcome.problem for outcome in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
