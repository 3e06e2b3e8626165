"""``run_tests()``: the ``__main__`` entry point of every test file.

Usage: ``python test_x.py [TestCls | TestCls.test_y ...] [-k PATTERN] [-v] [--save-xml [DIR]]
[--use-pytest] [--repeat N] [--seed N] [--accept] [--list]``. Exits 0 when every test passed
(or skipped), 1 on any failure, 2 with a one-line message on bad arguments, 130/143 when
interrupted by Ctrl-C/SIGTERM.

Under a launcher (``torchrun``) every rank runs the file: rank 0 writes the summary to stdout,
the others to stderr, and the JUnit XML of rank N > 0 is ``TEST-<file>-rank<N>.xml``
(``torch_testing_ext._engine.launched.launched_reports``).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import sys
import types
import unittest
from collections.abc import Iterator
from typing import NoReturn

from ..launched.launched_reports import abort_hook, rank_report_path, summary_stream
from ..launched.launcher_env import LaunchedRank, check_every_setting, launched_rank
from ..reporting.status import Status
from ..testcase.tensor_testcase import set_default_seed
from ..worlds import interrupts, settings
from .arg_types import positive_int
from .recording_result import RecordingTestResult, write_junit_xml

__all__ = ["run_tests", "load_tests", "DEFAULT_XML_DIR"]

__unittest = True

DEFAULT_XML_DIR = "test-reports"


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = _OneLineParser(prog=prog, description="Run this file's tests.")
    parser.add_argument("tests", nargs="*", metavar="TEST", help="TestCls or TestCls.test_name")
    parser.add_argument("-k", dest="patterns", action="append", default=[], metavar="PATTERN",
                        help="only tests whose id contains PATTERN (may repeat)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    parser.add_argument("--save-xml", nargs="?", const=DEFAULT_XML_DIR, metavar="DIR",
                        help=f"write JUnit XML to DIR (default {DEFAULT_XML_DIR})")
    parser.add_argument("--use-pytest", action="store_true", help="run the file under pytest")
    parser.add_argument("--repeat", type=positive_int, default=1, metavar="N", help="run the tests N times")
    parser.add_argument("--seed", type=_integer, metavar="N", help="seed for every test's setUp")
    parser.add_argument("--accept", action="store_true", help="accept new expecttest output")
    parser.add_argument("--list", action="store_true", help="print the test ids and run nothing")
    return parser


def load_tests(
    loader: unittest.TestLoader, standard_tests: unittest.TestSuite, pattern: str | None
) -> unittest.TestSuite:
    """unittest's ``load_tests`` hook: the module's tests, unchanged (sharding is run_test.py's)."""
    return standard_tests


def _iter_tests(suite: unittest.TestSuite) -> Iterator[unittest.TestCase]:
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _iter_tests(item)
        else:
            yield item


def _load(module: types.ModuleType, names: list[str], patterns: list[str]) -> unittest.TestSuite:
    loader = unittest.TestLoader()
    if patterns:
        loader.testNamePatterns = [p if "*" in p else f"*{p}*" for p in patterns]
    if not names:
        return loader.loadTestsFromModule(module)
    for name in names:
        target: object = module
        for part in name.split("."):
            target = getattr(target, part, None)
            if target is None:
                raise LookupError(f"no test named {name!r} in this file")
    return loader.loadTestsFromNames(names, module)


@dataclasses.dataclass(frozen=True)
class _TestFile:
    """The module whose tests run (``__main__`` for ``python test_x.py``), and its file."""

    module: types.ModuleType

    @property
    def path(self) -> str:
        return os.path.abspath(getattr(self.module, "__file__", None) or sys.argv[0])

    @property
    def stem(self) -> str:
        return os.path.splitext(os.path.basename(self.path))[0]

    def xml_path(self, directory: str, launched: LaunchedRank | None) -> str:
        return rank_report_path(os.path.join(directory, f"TEST-{self.stem}.xml"), launched)

    def short_id(self, test: unittest.TestCase) -> str:
        """``Class.test_x``: the test's id without the module's name."""
        return test.id().removeprefix(f"{self.module.__name__}.")


def _run_pytest(args: argparse.Namespace, file: _TestFile, launched: LaunchedRank | None) -> int:
    import pytest

    path = file.path
    command = [f"{path}::{name.replace('.', '::')}" for name in args.tests] or [path]
    # This package runs the session, so it is imported before pytest could rewrite its asserts.
    command += ["-W", f"ignore:Module already imported so cannot be rewritten; {__name__.split('.')[0]}"
                ":pytest.PytestAssertRewriteWarning"]
    if args.patterns:
        command += ["-k", " or ".join(args.patterns)]
    if args.verbose:
        command.append("-v")
    if args.save_xml:
        command.append(f"--junitxml={file.xml_path(args.save_xml, launched)}")
    if args.repeat > 1:
        command += ["-p", "no:cacheprovider"]
        status = 0
        for _ in range(args.repeat):
            status = status or int(pytest.main(command))
        return status
    status = int(pytest.main(command))
    return 0 if status == pytest.ExitCode.NO_TESTS_COLLECTED else status


def _run_unittest(args: argparse.Namespace, file: _TestFile, suite: unittest.TestSuite,
                  launched: LaunchedRank | None) -> int:
    results: list[RecordingTestResult] = []  # one per repetition

    def make_result(*result_args: object, **kwargs: object) -> RecordingTestResult:
        results.append(RecordingTestResult(*result_args, **kwargs))
        return results[-1]

    def write_xml() -> None:
        if args.save_xml:
            write_junit_xml([record for result in results for record in result.records],
                            file.xml_path(args.save_xml, launched), suite_name=file.stem,
                            file=os.path.relpath(file.path))

    def write_xml_of_hung_test(test: unittest.TestCase, message: str) -> None:
        # The watchdog ends this process next: keep what was reported, and the hung test.
        results[-1].record_ending(test, Status.TIMED_OUT, message.splitlines()[0], message)
        write_xml()

    runner = unittest.TextTestRunner(stream=summary_stream(launched), verbosity=2 if args.verbose else 1,
                                     resultclass=make_result)
    success = True
    try:
        with abort_hook(write_xml_of_hung_test):
            for repetition in range(args.repeat):
                if repetition:
                    # A suite drops its tests once they ran; load them again for each repetition.
                    suite = _load(file.module, args.tests, args.patterns)
                success = runner.run(suite).wasSuccessful() and success
    except KeyboardInterrupt:
        if launched is not None and results:  # the launcher ends the job: keep what was reported
            results[-1].printErrors()
            write_xml()
        raise
    write_xml()
    return 0 if success else 1


def _module_test_functions(module: types.ModuleType) -> list[str]:
    """The test functions defined at the top of ``module`` (pytest collects them; unittest's
    loader does not)."""
    return [name for name, value in vars(module).items()
            if name.startswith("test") and inspect.isfunction(value) and value.__module__ == module.__name__]


def _importing_script_for_a_child() -> bool:
    """True while multiprocessing imports the main script in another process (as
    ``__mp_main__``: in the fork server or a spawned child), where a module-level
    ``run_tests()`` must not run the tests again."""
    child_main = sys.modules.get("__mp_main__")
    # multiprocessing also names the parent's own __main__ "__mp_main__" in sys.modules; only
    # the module it runs the script as in a child is itself named so, and is not __main__ yet.
    return getattr(child_main, "__name__", None) == "__mp_main__" and child_main is not sys.modules.get("__main__")


def run_tests(argv: list[str] | None = None, *, module: types.ModuleType | None = None) -> None:
    """Run the tests of the ``__main__`` module (or of ``module``) as the command line asks,
    then exit. Called at a script's top level without ``if __name__ == "__main__":``, it
    does nothing where multiprocessing imports the script for a rank."""
    if module is None and _importing_script_for_a_child():
        return
    file = _TestFile(module or sys.modules["__main__"])
    prog = os.path.basename(sys.argv[0]) if module is None else os.path.basename(file.path)
    prog = prog or "test"
    args = _parser(prog).parse_args(sys.argv[1:] if argv is None else argv)
    try:
        check_every_setting()
        launched = launched_rank()
    except settings.SettingError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        sys.exit(2)
    if args.seed is not None:
        set_default_seed(args.seed)
    if args.accept:
        os.environ["EXPECTTEST_ACCEPT"] = "1"  # expecttest reads it at every assertExpected*
    interrupts.install_sigterm_handler()
    functions = _module_test_functions(file.module)
    if functions and not args.use_pytest and not args.list:
        print(f"{prog}: run_tests() collects test classes, not the module-level test functions "
              f"{', '.join(functions)}: running the file under pytest (as --use-pytest does), which "
              "runs both", file=sys.stderr)
        args.use_pytest = True
    try:
        if args.use_pytest:
            sys.exit(_run_pytest(args, file, launched))
        try:
            suite = _load(file.module, args.tests, args.patterns)
        except (LookupError, AttributeError, ImportError) as error:
            print(f"{prog}: error: {error.args[0] if error.args else error}", file=sys.stderr)
            sys.exit(2)
        if args.list:
            for test in _iter_tests(suite):
                print(file.short_id(test))
            sys.exit(0)
        sys.exit(_run_unittest(args, file, suite, launched))
    except KeyboardInterrupt as interrupt:
        print(f"\n{prog}: interrupted ({interrupt.args[0] if interrupt.args else 'Ctrl-C'})",
              file=sys.stderr)
        sys.exit(interrupts.exit_status_for(interrupt))
