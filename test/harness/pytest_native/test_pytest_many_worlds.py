"""``@pytest.mark.worlds``: one pytest session over a file of tests across worlds.

ONE ``python -m pytest`` run (one test process, one fork server) of the file below, read from
its JUnit XML and output: worlds that agree on fresh, kept and thread ranks; the kept worlds
reused by the next test; values that part between worlds and between the ranks of one world
(first divergence: name, step, world, line); per-rank comparison; a DTensor compared as its
full tensor without a collective (the ledger, ``CommDebugMode`` and a dispatch mode of the test
see nothing of ``compare``); a world that fails or hangs named; a world that skips; a test
that compares nothing; bad markers and misused fixtures as errors of their own tests; and
nothing left behind (processes, files).
"""

import re
import shutil
import tempfile
import uuid
from pathlib import Path

from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures.pytest_runs import PytestRun, failure_section, junit_outcomes, leftover_files, line_of, processes_with

WORLDS = '''
import time

import pytest
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Shard, distribute_tensor
from torch.distributed.tensor.debug import CommDebugMode
from torch.utils._python_dispatch import TorchDispatchMode

from torch_testing_ext.collectives import current_calls


def train(rank, world_size, scale_by_world=False, steps=3):
    """A data-parallel least-squares fit on a fixed global batch of 8."""
    w = torch.zeros(2, dtype=torch.float64)
    x = torch.arange(16, dtype=torch.float64).reshape(8, 2) / 10
    for _ in range(steps):
        xs = x.chunk(world_size)[rank]
        grad = 2 * xs.T @ (xs @ w - 1) / len(x)
        dist.all_reduce(grad)  # the sum of the shards' parts: the full batch's gradient
        w -= 0.1 * grad * (world_size if scale_by_world else 1)
        yield w


@pytest.mark.worlds(1, 2, 4)
def test_agree(rank, world_size, device, compare):
    assert dist.get_world_size() == world_size  # the group is up in each rank
    for w in train(rank, world_size):
        compare("w", w)


@pytest.mark.worlds(1, 2, 4, ranks="threads")
def test_agree_on_threads(rank, world_size, compare):
    for w in train(rank, world_size):
        compare("w", w)


KEPT = []


@pytest.mark.worlds(1, 2, ranks="kept")
class TestKeptWorlds:
    def test_a(self, rank, world_size, compare):
        KEPT.append(world_size)
        compare("kept", len(KEPT))

    def test_b(self, rank, world_size, compare):
        KEPT.append(world_size)
        compare("kept", len(KEPT))  # 2 in every world: each world's ranks ran test_a


@pytest.mark.worlds(1, 2, 4)
def test_lr_scaled(rank, world_size, compare):
    for w in train(rank, world_size, scale_by_world=True):
        compare("w", w)


@pytest.mark.worlds(1, 2, 4, ranks="threads")
def test_rank_seed(rank, compare):
    torch.manual_seed(rank)
    compare("init", torch.rand(3))


@pytest.mark.worlds(2, 4)
def test_per_rank(rank, world_size, compare):
    compare("same", rank, per_rank=True)
    compare("scaled", rank * world_size, per_rank=True)


@pytest.mark.worlds(1, 2, 4)
def test_dtensor(rank, world_size, compare):
    mesh = init_device_mesh("cpu", (world_size,))
    full = torch.arange(7 * 3, dtype=torch.float64).reshape(7, 3)  # 7 rows: uneven shards
    sharded = distribute_tensor(full, mesh, [Shard(0)])
    calls = len(current_calls())
    seen = []

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with CommDebugMode() as comms, Ops():
        compare("sharded", sharded)
        compare("nested", {"t": [sharded, 1.5]})
    assert comms.get_total_counts() == 0 and seen == [] and len(current_calls()) == calls
    compare("partial", DTensor.from_local(torch.ones(2) / world_size, mesh, [Partial()]))  # summed: ones


@pytest.mark.worlds(1, 2, 4)
def test_fails_in_world_4(rank, world_size, compare):
    compare("x", 1.0)
    assert world_size < 4, "too many ranks"


@pytest.mark.worlds(1, 2, timeout=3)
def test_hangs_in_world_2(rank, world_size, compare):
    compare("x", 1.0)
    if world_size == 2 and rank == 1:
        time.sleep(60)


@pytest.mark.worlds(1, 2, 4)
def test_skips_in_world_4(rank, world_size, compare):
    compare("x", 1.0)
    if world_size == 4:
        pytest.skip("four is too many here")


@pytest.mark.worlds(1, 2, 4)
def test_skip_hides_no_parting(rank, world_size, compare):
    compare("x", float(world_size))
    if world_size == 4:
        pytest.skip("four is too many here")


@pytest.mark.worlds(1, 2)
def test_compares_nothing(rank):
    pass


@pytest.mark.worlds(1, 2)
def test_rank_records_fewer_steps(rank, compare):
    compare("x", 1.0)
    if rank == 0:
        compare("x", 1.0)


@pytest.mark.worlds(1, 2)
def test_compares_an_object(rank, compare):
    compare("x", object())


@pytest.mark.worlds(2)
def test_one_world(rank):
    pass


@pytest.mark.worlds(1, 0, ranks="pool")
def test_bad_arguments(rank):
    pass


@pytest.mark.world_size(2)
@pytest.mark.worlds(1, 2)
def test_both_markers(rank):
    pass


@pytest.mark.world_size(2)
def test_compare_without_worlds(rank, compare):
    pass
'''


class TestWorldsSession(TestCase):
    """Every test reads the one session of the file above."""

    @classmethod
    def setUpClass(cls):
        cls.pytest = PytestRun({"test_worlds.py": WORLDS})
        cls.tmp = Path(tempfile.mkdtemp(prefix="worlds-tmp-"))
        cls.marker = f"TTE_SELFTEST_{uuid.uuid4().hex}"
        cls.result = cls.pytest.run("-rfEsx", "--junitxml=report.xml", TMPDIR=str(cls.tmp), **{cls.marker: "1"})
        cls.output = cls.result.stdout + cls.result.stderr
        outcomes = junit_outcomes(cls.pytest.root / "report.xml")
        cls.statuses = {name: status for name, (status, _) in outcomes.items()}
        cls.messages = {name: message for name, (_, message) in outcomes.items()}

    @classmethod
    def tearDownClass(cls):
        cls.pytest.cleanup()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def section(self, name):
        return "\n".join(failure_section(self.output, name))

    def test_worlds_that_agree_pass_on_fresh_kept_and_thread_ranks(self):
        for name in ("test_agree", "test_agree_on_threads", "test_a", "test_b", "test_dtensor"):
            with self.subTest(name):
                self.assertEqual(self.statuses.get(name), "passed", self.output[-3000:])

    def test_one_test_per_function_with_its_own_id(self):
        self.assertNotIn("test_agree[1ranks]", self.output)
        self.assertEqual(sum(name == "test_agree" for name in self.statuses), 1)

    def test_values_that_part_name_the_first_divergence(self):
        self.assertEqual(self.statuses["test_lr_scaled"], "failure")
        report = self.section("test_lr_scaled")
        self.assertIn("WorldsDisagree: the worlds disagree: 'w' step 0: world 2 differs from world 1 (the reference)",
                      report)
        line = line_of(WORLDS, 'compare("w", w)', 3)
        self.assertIn(f"'w' step 0, compared at test_worlds.py:{line}", report)
        self.assertRegex(report, r"'w', largest absolute difference from world 1 per step")
        self.assertRegex(report, r"\n\s+2\s+\S+\*\s+\S+\*")  # every step of both worlds beyond the tolerances
        self.assertIn("FAILED test_worlds.py::test_lr_scaled - the worlds disagree: 'w' step 0", self.output)

    def test_ranks_of_one_world_that_part_are_named(self):
        report = self.section("test_rank_seed")
        self.assertIn("'init' step 0: in world 2, rank 1 recorded another value than rank 0", report)

    def test_per_rank_compares_rank_with_rank(self):
        report = self.section("test_per_rank")  # 'same' agrees rank by rank, 'scaled' does not
        self.assertIn("the worlds disagree: 'scaled' step 0: rank 1 of world 4 differs from rank 1 of world 2 "
                      "(the reference)", report)
        self.assertIn("rank 1 of world 4:             4", report)

    def test_a_rank_that_records_fewer_steps(self):
        self.assertIn("'x' step 1: world 2 rank 1 did not record it", self.section("test_rank_records_fewer_steps"))

    def test_a_world_that_fails_or_hangs_is_named(self):
        fails = self.section("test_fails_in_world_4")
        self.assertIn("RankFailure: 1 world of 3 did not pass (world 4)", fails)
        self.assertIn("AssertionError: too many ranks", fails)
        self.assertIn("test_fails_in_world_4 - world 4: rank 0, 1, 2, 3", self.output)  # the summary line
        hangs = self.section("test_hangs_in_world_2")
        self.assertIn("RankError: 1 world of 2 did not pass (world 2)", hangs)
        self.assertIn("rank 1 timed out:", hangs)
        self.assertIn("timed out after 3 s", hangs)
        self.assertIn(f'test_worlds.py", line {line_of(WORLDS, "time.sleep(60)")}', hangs)  # its stack

    def test_a_skipped_world_is_named_and_hides_no_parting(self):
        self.assertEqual(self.statuses["test_skips_in_world_4"], "skipped")
        self.assertIn("world 4 skipped: four is too many here; worlds 1, 2 ran and agree",
                      self.messages["test_skips_in_world_4"])
        self.assertEqual(self.statuses["test_skip_hides_no_parting"], "failure")

    def test_a_test_that_compares_nothing_fails(self):
        self.assertIn("nothing was compared: worlds 1, 2 passed", self.section("test_compares_nothing"))

    def test_what_compare_does_not_take_fails_the_rank_at_its_call(self):
        report = self.section("test_compares_an_object")
        self.assertIn("TypeError: compare('x', value): value is of type object", report)
        self.assertNotIn("value_records.py", report)  # the test's call, not the harness's frames

    def test_bad_markers_and_misused_fixtures_are_errors_of_their_own_tests(self):
        expected = {"test_one_world": "worlds() takes two world sizes or more (the first is the reference), got 1",
                    "test_bad_arguments": "worlds(0): a world size is a positive integer; worlds(ranks='pool')",
                    "test_both_markers": "a test takes @pytest.mark.worlds(...) or @pytest.mark.world_size(...), "
                                         "not both",
                    "test_compare_without_worlds": "the 'compare' fixture is for tests marked @pytest.mark.worlds"}
        for name, message in expected.items():
            with self.subTest(name):
                self.assertIn(self.statuses[name], ("error", "failure"))
                self.assertIn(message, self.messages[name])

    def test_the_session_leaves_nothing_behind(self):
        self.assertEqual(processes_with(self.marker), [])
        self.assertEqual(leftover_files(self.tmp), [])
        self.assertEqual(re.findall(r"compared-\d", self.output), [])


if __name__ == "__main__":
    run_tests()
