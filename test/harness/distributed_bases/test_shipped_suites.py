"""Suites torch ships, run on our harness (torch_testing_ext._engine.distributed_bases.shipped_suites).

The face ``torch_testing_ext.distributed.distributed_test`` runs the installed torch's own file
with its harness imports bound to ours, without importing torch's harness; a rank forked from
the fork server runs the suite's code again under its own environment (as a spawned rank would
import it); and a thin test file over the suite passes, skips and fails its tests as upstream's
harness does, including a test whose ranks differ on purpose.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

from torch_testing_ext._engine.distributed_bases.shipped_suites import load_suite_file
from torch_testing_ext._engine.fresh import fork_server
from torch_testing_ext._engine.reporting.status import Status

from fixtures.paths import FIXTURES
from fixtures.runs import checkout_env, run_file


def _suite_env(temp_dir, world_size=2):
    barrier = Path(temp_dir) / "barrier"
    barrier.mkdir(exist_ok=True)
    return {"BACKEND": "gloo", "WORLD_SIZE": str(world_size), "TEMP_DIR": str(temp_dir),
            "INIT_METHOD": f"file://{temp_dir}/init"}


_INSPECT_FACE = textwrap.dedent("""
    import inspect, json, os, sys
    import torch
    before = {name for name in sys.modules if name.startswith("torch.testing._internal")}
    import torch_testing_ext.distributed.distributed_test as face
    from torch_testing_ext.common_distributed import MultiProcessTestCase
    method = face.DistributedTest._DistTestBase.test_all_reduce_sum
    code = inspect.unwrap(method).__code__
    line = open(code.co_filename).read().splitlines()[code.co_firstlineno - 1]
    print(json.dumps({
        "suite": face.__shipped_suite__,
        "torch_file": os.path.join(os.path.dirname(torch.__file__), "testing", "_internal",
                                   "distributed", "distributed_test.py"),
        "code_file": code.co_filename,
        "first_line": line.strip(),
        "ours": issubclass(face.TestDistBackend, MultiProcessTestCase),
        "module": face.TestDistBackend.__module__,
        "lockstep": getattr(face.DistributedTest._DistTestBase, "collectives_lockstep", True),
        "torch_harness_imported": sorted(
            {n for n in sys.modules if n.startswith("torch.testing._internal")} - before),
    }))
""")


class TestTheFace(unittest.TestCase):
    def test_runs_the_installed_torchs_file_on_our_harness(self):
        with tempfile.TemporaryDirectory(prefix="selftest-suite-") as temp:
            completed = subprocess.run([sys.executable, "-c", _INSPECT_FACE], capture_output=True, text=True,
                                       env=checkout_env(**_suite_env(temp)), timeout=120)
        self.assertEqual(completed.returncode, 0, completed.stderr[-3000:])
        facts = json.loads(completed.stdout.splitlines()[-1])
        self.assertEqual(facts["suite"], facts["torch_file"])
        self.assertEqual(facts["code_file"], facts["torch_file"])  # tracebacks name torch's file
        self.assertTrue(facts["first_line"].startswith(("def test_all_reduce_sum", "@")), facts["first_line"])
        self.assertTrue(facts["ours"])
        self.assertEqual(facts["module"], "torch_testing_ext.distributed.distributed_test")
        self.assertIs(facts["lockstep"], False)
        # torch's own code imports some of its testing modules (fsdp imports fake_pg); none of
        # the harness the suite is written against may be torch's.
        harness = {"torch.testing._internal.common_utils", "torch.testing._internal.common_distributed",
                   "torch.testing._internal.distributed.distributed_test"}
        self.assertEqual(harness & set(facts["torch_harness_imported"]), set())

    def test_without_its_environment_the_face_says_what_is_missing(self):
        env = checkout_env(BACKEND="gloo", WORLD_SIZE=None)
        completed = subprocess.run([sys.executable, "-c", "import torch_testing_ext.distributed.distributed_test"],
                                   capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(completed.returncode, 1)
        last = completed.stderr.strip().splitlines()[-1]
        self.assertIn("ImportError: torch_testing_ext.distributed.distributed_test (torch's "
                      "torch/testing/_internal/distributed/distributed_test.py) reads BACKEND, WORLD_SIZE", last)
        self.assertIn("missing: WORLD_SIZE", last)


_SUITE = """\
import os
RUNS = globals().get("RUNS", 0) + 1
VALUE = os.environ.get("SUITE_VALUE")

class Suite:
    class Nested:
        pass

    def value(self):
        return VALUE
"""


class TestRereadInARank(unittest.TestCase):
    def setUp(self):
        folder = tempfile.mkdtemp(prefix="selftest-suite-")
        self.addCleanup(lambda: (os.remove(self.path), os.rmdir(folder)))
        self.path = os.path.join(folder, "suite.py")
        with open(self.path, "w") as f:
            f.write(_SUITE)
        patches = [mock.patch.dict(os.environ, {"SUITE_VALUE": "server"}),
                   mock.patch.object(fork_server, "_rereaders", [])]
        for patch in patches:
            patch.start()
            self.addCleanup(patch.stop)
        self.namespace = {"__name__": "selftest_face"}
        load_suite_file(self.namespace, self.path)

    def test_a_rank_with_another_environment_runs_the_suite_again(self):
        old_class = self.namespace["Suite"]
        self.assertEqual(old_class().value(), "server")
        fork_server.adopt_environment({**os.environ, "SUITE_VALUE": "rank"})  # what a forked rank does
        self.assertEqual(self.namespace["RUNS"], 2)
        self.assertEqual(old_class().value(), "rank")  # the classes a test file holds see it too

    def test_a_rank_with_the_same_environment_does_not(self):
        fork_server.adopt_environment(dict(os.environ))
        self.assertEqual(self.namespace["RUNS"], 1)

    def test_nor_one_whose_environment_differs_only_where_the_suite_never_looks(self):
        fork_server.adopt_environment({**os.environ, "SOMETHING_ELSE": "rank"})
        self.assertEqual(self.namespace["RUNS"], 1)

    def test_every_class_of_the_suite_is_not_in_lockstep(self):
        for cls in (self.namespace["Suite"], self.namespace["Suite"].Nested):
            self.assertIs(cls.collectives_lockstep, False)

    def test_a_file_that_does_not_parse_names_itself(self):
        with open(self.path, "w") as f:
            f.write("def broken(:\n")
        with self.assertRaises(SyntaxError) as caught:
            load_suite_file({"__name__": "x"}, self.path)
        self.assertEqual(caught.exception.filename, self.path)


class TestAThinFileOverTheSuite(unittest.TestCase):
    def test_outcomes_as_upstreams_harness_gives_them(self):
        tests = {
            "test_all_reduce_sum": Status.PASSED,
            "test_broadcast": Status.PASSED,
            # rank 0 waits at a barrier that rank 1 never reaches, and expects the timeout: it
            # needs the suite's INIT_METHOD re-read in the rank, and no lockstep rule.
            "test_barrier_timeout_global": Status.PASSED,
            "test_all_reduce_sum_cuda": Status.SKIPPED,
            "test_broadcast_group": Status.SKIPPED,  # upstream skips it below world size 8
        }
        with tempfile.TemporaryDirectory(prefix="selftest-suite-") as temp:
            selection = [arg for name in tests for arg in ("-k", name)]
            run = run_file(FIXTURES / "shipped_suite_spawn.py", *selection, env=_suite_env(temp), timeout=240)
        found = {name.split(".")[-1]: status for name, status in run.statuses.items()
                 if name.split(".")[-1] in tests}
        self.assertEqual(found, tests, run.output[-3000:])


_INSPECT_OP_DB = textwrap.dedent("""
    import json, sys
    import torch
    # torch's own packages import a few data modules of torch.testing._internal themselves
    # (common_dtype for torch._refs; from torch 2.15, distributed.fake_pg for torch.distributed.fsdp).
    import torch.distributed.fsdp
    before = {name for name in sys.modules if name.startswith("torch.testing._internal")}
    import torch_testing_ext.common_methods_invocations as methods
    from torch_testing_ext import common_device_type, common_utils
    from torch_testing_ext.opinfo import core
    print(json.dumps({
        "ops": len(methods.op_db),
        "torch_harness_imported": sorted(
            {n for n in sys.modules if n.startswith("torch.testing._internal")} - before),
        "opinfo_module": methods.OpInfo.__module__,
        "same_opinfo": methods.OpInfo is core.OpInfo,
        "tracked_is_ours": core.TrackedInputIter is common_utils.TrackedInputIter,
        "tol_is_ours": core.tol is common_device_type.tol,
        "file": methods.__file__,
        "lockstep_mark": hasattr(methods.OpInfo, "collectives_lockstep"),
        "conv2d": [op.formatted_name for op in methods.op_db if op.name == "nn.functional.conv2d"],
    }))
""")


class TestTheOpInfoFaces(unittest.TestCase):
    """common_methods_invocations and opinfo/ are the installed torch's files, loaded once on
    our harness (load_shipped_module)."""

    def test_op_db_loads_without_torchs_harness(self):
        completed = subprocess.run([sys.executable, "-c", _INSPECT_OP_DB], capture_output=True, text=True,
                                   env=checkout_env(), timeout=300)
        self.assertEqual(completed.returncode, 0, completed.stderr[-3000:])
        facts = json.loads(completed.stdout.splitlines()[-1])
        self.assertGreater(facts["ops"], 500)
        # Not one module of torch.testing._internal more than torch's own packages import.
        self.assertEqual(facts["torch_harness_imported"], [])
        self.assertEqual(facts["opinfo_module"], "torch_testing_ext.opinfo.core")
        self.assertTrue(facts["same_opinfo"] and facts["tracked_is_ours"] and facts["tol_is_ours"], facts)
        self.assertTrue(facts["file"].endswith("torch/testing/_internal/common_methods_invocations.py"))
        self.assertIs(facts["lockstep_mark"], False)  # a module of data, not a suite
        self.assertEqual(facts["conv2d"], ["nn_functional_conv2d"])


class TestLoadingAFile(unittest.TestCase):
    def test_a_dotted_upstream_path_in_code_reaches_ours(self):
        with tempfile.TemporaryDirectory(prefix="selftest-suite-") as folder:
            path = os.path.join(folder, "uses.py")
            with open(path, "w") as f:
                # As in common_methods_invocations: imported by name, then used as torch's attribute.
                f.write("import torch\nfrom torch.testing._internal.common_utils import run_tests\n"
                        "CASE = torch.testing._internal.common_utils.TestCase\n")
            namespace = {"__name__": "selftest_dotted"}
            with mock.patch.object(fork_server, "_rereaders", []):
                load_suite_file(namespace, path)
        from torch_testing_ext.common_utils import TestCase

        self.assertIs(namespace["CASE"], TestCase)
