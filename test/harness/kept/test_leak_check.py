"""Self-tests of what a kept rank checks after each test (``kept.leak_check``,
``global_state``, ``mesh_groups``).

In process: each setting is read, a change is named from what to what, what this torch cannot
read compares equal, and the groups of device meshes (on a one-process fake world) are
destroyed once no mesh holds them while the test's own groups are left to the leak check.
Then whole runs: ``fixtures/kept_state_cases.py`` as a file, both its classes in one run
(each kind of state left behind fails its test naming it, and the innocent test after it
passes; device meshes on 4 kept ranks pass and the next test starts clean on the same world; a
group of the test's own fails it), and ``fixtures/kept_state_pytest.py`` under
``python -m pytest`` on kept ranks.
"""

import contextlib
import dataclasses
import os
import re
import sys
import tempfile

import torch
import torch.distributed as dist

from torch_testing_ext._engine._torch_private import clear_dtensor_caches, live_process_groups
from torch_testing_ext._engine.kept import global_state
from torch_testing_ext._engine.kept.global_state import GlobalState
from torch_testing_ext._engine.kept.leak_check import RankState, find_leaks
from torch_testing_ext._engine.kept.mesh_groups import release_mesh_groups
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext.common_utils import TestCase

from fixtures.paths import FIXTURES
from fixtures.pytest_runs import PytestRun, failure_section
from fixtures.runs import FileRun, assert_outcomes, run_file


def failure_reports(output, cls):
    """{test name: its report} for each FAIL/ERROR section of class ``cls``'s tests in a
    unittest run's output."""
    reports = {}
    for block in re.split(r"\n={70}\n", output)[1:]:
        found = re.match(r"(?:FAIL|ERROR): (\w+) \((?:[\w.]+\.)?(\w+)\.\1\)", block)
        if found and found.group(2) == cls:
            reports[found.group(1)] = block
    return reports


@contextlib.contextmanager
def fake_world(world_size=4):
    """A one-process world of ``world_size`` ranks (the fake backend: collectives do nothing)."""
    from torch_testing_ext.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world_size)
    try:
        yield
    finally:
        clear_dtensor_caches()  # no mesh of this world for a later test
        dist.destroy_process_group()


class TestGlobalState(TestCase):
    def test_every_setting_is_read_on_this_machine(self):
        state = GlobalState.take("cpu")
        unreadable = [name for name, value in state.settings.items() if value == global_state._UNREADABLE]
        self.assertEqual(unreadable, [])
        self.assertEqual(state.settings["torch.get_default_dtype()"], torch.get_default_dtype())
        self.assertEqual(state.settings["torch.is_grad_enabled()"], torch.is_grad_enabled())
        self.assertEqual((state.cwd, state.sys_path), (os.getcwd(), tuple(sys.path)))
        self.assertEqual(GlobalState.take("cpu").changes_since(state), [])

    def test_a_change_is_named_from_what_to_what(self):
        before = GlobalState.take("cpu")
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            with torch.no_grad():
                changes = GlobalState.take("cpu").changes_since(before)
        finally:
            torch.set_default_dtype(previous)
        self.assertEqual(changes, [f"changed torch.get_default_dtype() from {previous} to torch.float64, "
                                   "torch.is_grad_enabled() from True to False (restore them in the test)"])

    def test_the_working_directory_and_sys_path(self):
        before = GlobalState.take("cpu")
        after = GlobalState("cpu", dict(before.settings), "/elsewhere", ("/added", *before.sys_path[1:]))
        self.assertEqual(after.changes_since(before), [
            f"changed the working directory from {before.cwd!r} to '/elsewhere' (restore it in the test)",
            f"changed sys.path: added '/added', removed {before.sys_path[0]!r} (restore it in the test)"])
        reordered = GlobalState("cpu", dict(before.settings), before.cwd, (*before.sys_path[1:], before.sys_path[0]))
        self.assertEqual(reordered.changes_since(before),
                         ["changed sys.path: reordered its entries (restore it in the test)"])

    def test_an_entry_a_package_imported_since_adds_inside_itself_is_not_the_test_s(self):
        # setuptools adds its _vendor when first imported (torch.compile's first build imports it).
        import json

        now = GlobalState.take("cpu")
        before = dataclasses.replace(now, modules=now.modules - {"json"})  # as if json came since
        inside = os.path.join(os.path.dirname(json.__file__), "_vendor")
        beside = os.path.join(os.path.dirname(os.path.dirname(json.__file__)), "elsewhere")
        self.assertEqual(dataclasses.replace(now, sys_path=(*now.sys_path, inside)).changes_since(before), [])
        self.assertEqual(dataclasses.replace(now, sys_path=(*now.sys_path, inside, beside)).changes_since(before),
                         [f"changed sys.path: added {beside!r} (restore it in the test)"])
        # With no package imported since, the same entry is the test's.
        self.assertEqual(dataclasses.replace(now, sys_path=(*now.sys_path, inside)).changes_since(now),
                         [f"changed sys.path: added {inside!r} (restore it in the test)"])

    def test_a_removed_working_directory_is_unreadable(self):
        previous = os.getcwd()
        with tempfile.TemporaryDirectory() as gone:
            os.chdir(gone)
        try:
            self.assertEqual(global_state._cwd(), "<unreadable> (No such file or directory)")
        finally:
            os.chdir(previous)

    def test_what_cannot_be_read_compares_equal(self):
        def missing():
            raise AttributeError("not in this torch")

        self.assertEqual(global_state._read(missing), global_state._UNREADABLE)
        before = GlobalState("cpu", {"x": global_state._UNREADABLE}, "/", ())
        self.assertEqual(GlobalState("cpu", {"x": global_state._UNREADABLE}, "/", ()).changes_since(before), [])
        self.assertEqual(GlobalState("cpu", {"x": True}, "/", ()).changes_since(before),
                         ["changed x from <unreadable> to True (restore it in the test)"])

    def test_intra_op_threads_are_not_a_setting(self):
        # The harness sets them for each rank (its share of the CPUs).
        self.assertNotIn("torch.get_num_threads()", GlobalState.take("cpu").settings)


class TestMeshGroups(TestCase):
    """On a fake world of 4 ranks in this process (its groups made and destroyed here)."""

    def mesh_groups(self):
        return sorted(g.group_desc for g in live_process_groups() if g is not dist.group.WORLD)

    def test_groups_of_meshes_gone_are_destroyed_and_a_test_s_own_stay(self):
        from torch.distributed.device_mesh import init_device_mesh

        with fake_world():
            before = tuple(live_process_groups())
            state = RankState.take("cpu")
            own = dist.new_group([0, 1])
            init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))  # dropped at once
            self.assertEqual(self.mesh_groups(), ["mesh_dp", "mesh_tp", "undefined"])
            release_mesh_groups(before)
            self.assertEqual(self.mesh_groups(), ["undefined"])
            leaks = find_leaks(state)
            self.assertEqual(leaks, [f"left process group '{own.group_name}' of 2 ranks (destroy it in the test)"])

    def test_a_live_mesh_keeps_its_groups_until_it_is_gone(self):
        from torch.distributed.device_mesh import init_device_mesh

        with fake_world():
            before = tuple(live_process_groups())
            state = RankState.take("cpu")
            mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
            flat = mesh["dp", "tp"]._flatten("dp_tp")  # root and flattened mesh refer to each other
            release_mesh_groups(before)
            self.assertEqual(self.mesh_groups(), ["mesh_dp", "mesh_tp"])
            self.assertEqual(find_leaks(state), [])  # a mesh's groups are never the test's leak
            del mesh, flat  # garbage in a cycle now
            release_mesh_groups(before)
            self.assertEqual(self.mesh_groups(), [])

    def test_dtensor_s_caches_never_hand_out_a_mesh_gone(self):
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Shard, distribute_tensor

        def added_one():
            mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
            return mesh, (distribute_tensor(torch.ones(4, 4), mesh, [Shard(0), Shard(1)]) + 1).device_mesh

        with fake_world():
            before = tuple(live_process_groups())
            first, _ = added_one()
            mesh, result_mesh = added_one()  # a mesh equal to the first one
            self.assertIs(result_mesh, first, "DTensor's cache gives the result the first mesh")
            del first, _, mesh, result_mesh  # DTensor's caches still hold the first mesh
            release_mesh_groups(before)
            self.assertEqual(self.mesh_groups(), [])
            mesh, result_mesh = added_one()
            self.assertIs(result_mesh, mesh, "a result of the mesh made now, not of one destroyed")
            del mesh, result_mesh
            release_mesh_groups(before)


class TestKeptRanksLeaveNothing(TestCase):
    """``fixtures/kept_state_cases.py`` run as a file once, both its classes (each on a world of
    its own, one after the other, as in any file); each test reads its class's part."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.whole_run = run_file(FIXTURES / "kept_state_cases.py", "LeavesState", "MakesMeshes", cwd=FIXTURES.parent)

    def class_run(self, cls):
        """The file's run with only class ``cls``'s tests' statuses (exit status and output whole)."""
        run = self.whole_run
        return FileRun(run.returncode, run.stdout, run.stderr,
                       {test: status for test, status in run.statuses.items() if test.startswith(f"{cls}.")})

    def test_both_classes_ran_and_nothing_else(self):
        self.assertEqual(self.whole_run.returncode, 1, self.whole_run.output[-3000:])
        assert_outcomes(self, self.whole_run, passed=13 + 8, failed=11 + 1)

    def test_state_left_behind_fails_the_test_that_left_it_and_the_next_test_passes(self):
        run = self.class_run("LeavesState")
        expected = {
            "test_01_default_dtype": "torch.get_default_dtype() from torch.float32 to torch.float64",
            "test_03_default_device": "torch.get_default_device() from cpu to meta",
            "test_05_grad_mode": "torch.is_grad_enabled() from True to False",
            "test_07_inference_mode": "torch.is_grad_enabled() from True to False, "
                                      "torch.is_inference_mode_enabled() from False to True",
            "test_09_deterministic_algorithms": "torch.are_deterministic_algorithms_enabled() from False to True, "
                                                "torch.is_deterministic_algorithms_warn_only_enabled() from False "
                                                "to True",
            "test_11_anomaly_mode": "torch.is_anomaly_enabled() from False to True, "
                                    "torch.is_anomaly_check_nan_enabled() from True to False",
            "test_13_backends_flags": "torch.get_float32_matmul_precision() from 'highest' to 'medium', "
                                      "torch.backends.cudnn.benchmark from False to True",
            "test_15_working_directory": f"the working directory from {str(FIXTURES.parent)!r} to "
                                         f"{str(FIXTURES.parent.parent)!r}",
            "test_17_sys_path": "sys.path: added '/kept-state/nowhere'",
            "test_19_environment": "the environment: KEPT_STATE_LEAKED set",
            "test_21_debug_level": "torch.distributed.get_debug_level() from DebugLevel.OFF to DebugLevel.DETAIL",
        }
        reports = failure_reports(run.output, "LeavesState")
        for test, change in expected.items():
            with self.subTest(test):
                self.assertEqual(run.statuses.get(f"LeavesState.{test}"), Status.FAILED, run.output[-3000:])
                self.assertIn("2 of 2 ranks did not pass (rank 0, 1)", reports[test])
                self.assertIn(f"[rank 0] the test left state behind for the class's next test: it changed {change}",
                              reports[test])
        self.assertIn("torch.backends.mkldnn.enabled from True to False", reports["test_13_backends_flags"])
        # Every innocent test after one passes (each asserts torch's default), and a test that
        # restores what it changes keeps the world.
        assert_outcomes(self, run, passed=13, failed=11)
        self.assertEqual(sorted(reports), sorted(expected))

    def test_device_meshes_on_kept_ranks_are_not_leaks_but_a_group_of_the_test_s_own_is(self):
        run = self.class_run("MakesMeshes")
        assert_outcomes(self, run, passed=8, failed=1)
        self.assertEqual(run.statuses.get("MakesMeshes.test_8_leaves_its_own_group"), Status.FAILED)
        reports = failure_reports(run.output, "MakesMeshes")
        self.assertEqual(sorted(reports), ["test_8_leaves_its_own_group"])
        report = reports["test_8_leaves_its_own_group"]
        self.assertIn("2 of 4 ranks did not pass (rank 0, 1)", report)
        self.assertRegex(report, r"\[rank 0\] the test left state behind for the class's next test: it left "
                                 r"process group '\d+' of 2 ranks \(destroy it in the test\)")


class TestPytestKeptRanksLeaveNothing(TestCase):
    def test_meshes_pass_and_state_fails_the_test_that_left_it(self):
        run = PytestRun({"test_kept_state.py": (FIXTURES / "kept_state_pytest.py").read_text()})
        self.addCleanup(run.cleanup)
        result = run.run("-q", "-rf")
        output = result.stdout + result.stderr
        self.assertEqual(result.returncode, 1, output)
        self.assertIn("2 failed, 6 passed", output.splitlines()[-1], output)
        failed = sorted(line.split(" - ")[0] for line in output.splitlines() if line.startswith("FAILED "))
        self.assertEqual(failed, ["FAILED test_kept_state.py::TestState::test_1_default_dtype",
                                  "FAILED test_kept_state.py::TestState::test_3_own_group"], output)
        dtype = "\n".join(failure_section(result.stdout, "TestState.test_1_default_dtype"))
        self.assertIn("[rank 0] the test left state behind for the class's next test: it changed "
                      "torch.get_default_dtype() from torch.float32 to torch.float64 (restore it in the test)", dtype)
        group = "\n".join(failure_section(result.stdout, "TestState.test_3_own_group"))
        self.assertRegex(group, r"\[rank 0\] the test left state behind for the class's next test: it left "
                                r"process group '\d+' of 2 ranks \(destroy it in the test\)")
