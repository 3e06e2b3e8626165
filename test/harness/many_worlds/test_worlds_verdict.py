"""Many worlds, in process: the marker's arguments, values on their way out of a rank and put
together again (DTensor shards, without a collective), when two values agree, where the worlds
first part, how that reads, and the one verdict of a test across worlds.

The ranks themselves run in ``pytest_native/test_pytest_many_worlds.py`` and
``fresh/test_across_worlds.py``; here the records are made by hand.
"""

import os
import pickle
import tempfile
import unittest
import warnings

import torch

from torch_testing_ext import RankError, RankFailure, WorldsDisagree
from torch_testing_ext._engine.many_worlds.across import WorldRun, raise_worlds_verdict, worlds_verdict
from torch_testing_ext._engine.many_worlds.agreement import DEFAULT_TOLERANCES, difference, show
from torch_testing_ext._engine.many_worlds.divergence import WorldRecords, first_divergence, step_table
from torch_testing_ext._engine.many_worlds.divergence_report import MAX_ROWS, divergence_report
from torch_testing_ext._engine.many_worlds.value_records import Record, Recorder, read_records, records_file
from torch_testing_ext._engine.many_worlds.values import AssemblyError, Shard, assemble, to_payload
from torch_testing_ext._engine.many_worlds.worlds_spec import WorldsSpec, WorldsSpecError, parse_worlds
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.worlds.outcomes import Verdict
from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.two_tensor import TwoTensor


class TestSpec(TestCase):
    def test_good_arguments(self):
        self.assertEqual(parse_worlds((1, 2, 4), {}), WorldsSpec((1, 2, 4)))
        spec = parse_worlds((2, 1), {"rtol": 0, "atol": 1e-9, "ranks": "kept", "timeout": 5, "allow_cpu": True})
        self.assertEqual(spec, WorldsSpec((2, 1), 0.0, 1e-9, "kept", 5.0, True))
        self.assertEqual(spec.reference, 2)

    def test_every_bad_argument_is_named_in_one_line(self):
        with self.assertRaises(WorldsSpecError) as caught:
            parse_worlds((1, "2", 0), {"rtol": 1e-3, "ranks": "pool", "timeout": -1, "colour": 1})
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        for part in ("worlds('2')", "worlds(0)", "give both rtol and atol", "ranks='pool'", "timeout",
                     "colour=...): unknown argument"):
            self.assertIn(part, message)

    def test_one_world_compares_nothing_and_a_size_twice_is_refused(self):
        with self.assertRaisesRegex(WorldsSpecError, r"two world sizes or more .* got 1"):
            parse_worlds((2,), {})
        with self.assertRaisesRegex(WorldsSpecError, "a world size is given twice"):
            parse_worlds((2, 2), {})
        with self.assertRaisesRegex(WorldsSpecError, r"across_worlds\(True\)"):
            parse_worlds((True, 2), {}, name="across_worlds")


class TestValues(TestCase):
    def test_a_tensor_leaves_as_a_detached_cpu_copy(self):
        weight = torch.nn.Parameter(torch.ones(3))
        payload = to_payload({"w": weight, "steps": [1, 2.5, "x", None]})
        self.assertIs(type(payload["w"]), torch.Tensor)
        self.assertFalse(payload["w"].requires_grad)
        with torch.no_grad():
            weight.add_(1)  # later changes do not reach the record
        self.assertEqual(payload["w"].tolist(), [1.0, 1.0, 1.0])
        self.assertEqual(payload["steps"], [1, 2.5, "x", None])

    def test_a_view_leaves_without_its_base(self):
        base = torch.arange(1000.0)
        self.assertEqual(len(pickle.dumps(to_payload(base[:2]))) < len(pickle.dumps(base)) // 4, True)

    def test_what_compare_does_not_take_is_named_where_it_is(self):
        with self.assertRaisesRegex(TypeError, r"value\['a'\]\[1\] is of type object"):
            to_payload({"a": [1, object()]})
        with self.assertRaisesRegex(TypeError, "value is of type TwoTensor, a tensor subclass"):
            to_payload(TwoTensor(torch.ones(2), torch.ones(2)))

    def _shards(self, full, mesh_shape, placements):
        """The shard of every rank of a mesh of ``mesh_shape`` (ranks in row-major order), cut
        from ``full`` as a DTensor would: placements applied from the first mesh dimension."""
        ranks = list(range(int(torch.tensor(mesh_shape).prod())))
        grid = torch.tensor(ranks).reshape(mesh_shape)
        shards = {}
        for rank in ranks:
            coordinate = tuple(int(i) for i in (grid == rank).nonzero()[0])
            local = full
            for dim, (kind, detail) in enumerate(placements):
                if kind == "shard":
                    pieces = list(torch.chunk(local, mesh_shape[dim], dim=detail))
                    pieces += [local.narrow(detail, 0, 0)] * (mesh_shape[dim] - len(pieces))
                    local = pieces[coordinate[dim]]
                elif kind == "partial":
                    local = local / mesh_shape[dim] if detail == "sum" else local
            shards[rank] = Shard(local.clone(), tuple(ranks), tuple(mesh_shape), coordinate, tuple(placements),
                                 tuple(full.shape))
        return shards

    def test_shards_come_together_as_the_full_tensor(self):
        full = torch.arange(7 * 6, dtype=torch.float64).reshape(7, 6)
        layouts = [((4,), [("shard", 0)]),                          # uneven: 2, 2, 2, 1 rows
                   ((3,), [("shard", 1)]),
                   ((2, 2), [("shard", 0), ("shard", 0)]),          # the same dimension twice
                   ((2, 2), [("shard", 1), ("replicate", None)]),
                   ((2, 2), [("replicate", None), ("partial", "sum")]),
                   ((2,), [("partial", "max")]),
                   ((8,), [("shard", 0)])]                          # more ranks than rows: empty shards
        for mesh_shape, placements in layouts:
            with self.subTest(mesh=mesh_shape, placements=placements):
                shards = self._shards(full, mesh_shape, placements)
                values = assemble({rank: {"p": [shard]} for rank, shard in shards.items()})
                for value in values.values():
                    self.assertEqual(value["p"][0], full, atol=1e-12, rtol=0)

    def test_each_rank_gets_the_full_tensor_of_its_own_mesh(self):
        full = torch.arange(4.0)
        first = self._shards(full, (2,), [("shard", 0)])
        second = {rank + 2: Shard(s.local * 10, (2, 3), s.mesh_shape, s.coordinate, s.placements, s.shape)
                  for rank, s in first.items()}
        values = assemble({**first, **second})
        self.assertEqual(values[1], full)
        self.assertEqual(values[3], full * 10)

    def test_a_missing_shard_is_named(self):
        shards = self._shards(torch.arange(4.0), (2,), [("shard", 0)])
        with self.assertRaisesRegex(AssemblyError, r"value of rank 0: rank 1 of its mesh did not record its shard"):
            assemble({0: shards[0], 1: 3.0})


class TestAgreement(TestCase):
    def test_values_within_the_tolerances_agree(self):
        one = torch.tensor([1.0, 2.0], dtype=torch.float64)
        self.assertTrue(difference(one, one + 1e-9).agree)  # float64 defaults: 1e-7
        gap = difference(one, one + 1e-3)
        self.assertFalse(gap.agree)
        self.assertAlmostEqual(gap.largest, 1e-3, delta=1e-12)
        self.assertIn("Tensor-likes are not close", gap.message)
        self.assertTrue(difference(one, one + 1e-3, rtol=0, atol=1e-2).agree)

    def test_shapes_dtypes_structures_and_exact_kinds(self):
        self.assertIn("shape (2,) is not the reference's (3,)", difference(torch.ones(2), torch.ones(3)).message)
        self.assertIn("dtype torch.float32", difference(torch.ones(2), torch.ones(2, dtype=torch.float64)).message)
        self.assertIn("structure", difference([1.0], [1.0, 2.0]).message)
        self.assertFalse(difference(3, 4).agree)
        self.assertTrue(difference(float("nan"), float("nan")).agree)
        self.assertFalse(difference("adam", "sgd").agree)
        self.assertIn("at value['b']", difference({"a": 1.0, "b": 2.0}, {"a": 1.0, "b": 3.0}).message)

    def test_the_default_tolerances_are_assert_closes(self):
        # Within the table's tolerances a value agrees without asking assert_close: the table must
        # be assert_close's own (an absolute and a relative limit, each checked on both sides).
        for dtype, (rtol, atol) in DEFAULT_TOLERANCES.items():
            for expected, limit in ((0.0, atol), (1000.0, atol + rtol * 1000.0)):
                with self.subTest(dtype=dtype, expected=expected), warnings.catch_warnings():
                    warnings.filterwarnings("ignore", "ComplexHalf support is experimental")
                    reference = torch.full((1,), expected, dtype=dtype)
                    for scale, agrees in ((0.5, True), (2.0, False)):
                        actual = torch.full((1,), expected + scale * limit, dtype=dtype)
                        try:
                            torch.testing.assert_close(actual, reference)
                            theirs = True
                        except AssertionError:
                            theirs = False
                        self.assertEqual(theirs, agrees, f"assert_close at {scale} of the limit")
                        self.assertEqual(difference(actual, reference, measure=False).agree, agrees)

    def test_a_value_shows_in_one_line(self):
        self.assertEqual(show(torch.tensor([0.5, 1.0], dtype=torch.float64)), "tensor([0.5, 1.0], float64)")
        self.assertIn("shape (10, 10)", show(torch.zeros(10, 10)))
        self.assertEqual(show(0.1 + 0.2), "0.3")


def records(*calls):
    """Records of one rank from (name, value) or (name, value, per_rank) calls, in order."""
    made, steps = [], {}
    for seq, call in enumerate(calls):
        name, value, *per_rank = call
        made.append(Record(seq, name, steps.get(name, 0), bool(per_rank and per_rank[0]), f"test_x.py:{10 + seq}",
                           value))
        steps[name] = steps.get(name, 0) + 1
    return made


def world(size, *per_rank_calls, finished=True):
    return WorldRecords(size, {rank: records(*calls) for rank, calls in enumerate(per_rank_calls)}, finished)


class TestDivergence(TestCase):
    def test_worlds_that_agree_have_no_divergence(self):
        loop = [("loss", 0.5), ("w", torch.ones(2)), ("loss", 0.25), ("w", torch.zeros(2))]
        self.assertIsNone(first_divergence([world(1, loop), world(2, loop, loop)]))

    def test_the_first_divergence_in_execution_order(self):
        reference = [("loss", 0.5), ("w", torch.ones(2)), ("loss", 0.25), ("w", torch.zeros(2))]
        late_w = [("loss", 0.5), ("w", torch.ones(2)), ("loss", 0.25), ("w", torch.ones(2))]
        early_loss = [("loss", 0.5), ("w", torch.ones(2)), ("loss", 0.3), ("w", torch.zeros(2))]
        found = first_divergence([world(1, reference), world(2, late_w, late_w), world(4, *[early_loss] * 4)])
        self.assertEqual((found.name, found.step, found.world, found.line), ("loss", 1, 4, "test_x.py:12"))
        self.assertIn("world 4 differs from world 1 (the reference)", found.summary)

    def test_ranks_of_one_world_that_part(self):
        found = first_divergence([world(1, [("w", 1.0)]), world(2, [("w", 1.0)], [("w", 2.0)])])
        self.assertEqual(found.summary, "'w' step 0: in world 2, rank 1 recorded another value than rank 0")
        self.assertIn("rank 1: 2.0", found.detail)

    def test_a_step_a_rank_did_not_record(self):
        both = [("w", 1.0), ("w", 1.0)]
        found = first_divergence([world(1, both), world(2, both, [("w", 1.0)])])
        self.assertEqual((found.step, found.world), (1, 2))
        self.assertIn("rank 1 did not record it", found.summary)

    def test_a_world_that_did_not_finish_is_compared_on_what_it_recorded(self):
        both = [("w", 1.0), ("w", 1.0)]
        self.assertIsNone(first_divergence([world(1, both), world(2, [("w", 1.0)], [], finished=False)]))

    def test_a_step_the_reference_lacks(self):
        found = first_divergence([world(1, [("w", 1.0)]), world(2, *[[("w", 1.0), ("w", 1.0)]] * 2)])
        self.assertIn("world 2 recorded it, world 1 (the reference) did not", found.summary)

    def test_per_rank_names_compare_rank_with_rank(self):
        def ranks(size, scale):
            return world(size, *[[("r", rank * scale, True)] for rank in range(size)])

        self.assertIsNone(first_divergence([ranks(2, 1), ranks(4, 1)]))
        found = first_divergence([ranks(2, 1), ranks(4, 2)])
        self.assertIn("rank 1 of world 4 differs from rank 1 of world 2", found.summary)

    def test_a_rank_that_records_no_step_of_a_name_is_not_blamed(self):
        self.assertIsNone(first_divergence([world(1, [("loss", 1.0)]), world(2, [("loss", 1.0)], [])]))

    def test_the_table_shows_a_drift_that_grows(self):
        ref = [("w", float(step)) for step in range(3)]
        drift = [("w", step + 0.1 * step) for step in range(3)]
        worlds = [world(1, ref), world(2, drift, drift)]
        table = step_table(worlds, "w")
        self.assertEqual([round(table[step][2].largest, 6) for step in range(3)], [0.0, 0.1, 0.2])
        self.assertEqual([table[step][2].beyond for step in range(3)], [False, True, True])
        report = divergence_report(worlds, first_divergence(worlds))
        self.assertIn("first divergence, in execution order: 'w' step 1, compared at test_x.py:11", report)
        self.assertRegex(report, r"\n\s+2\s+2\.00e-01\*")

    def test_a_long_run_shows_the_steps_around_the_divergence_and_the_last(self):
        steps = 50
        ref = [("w", 0.0)] * steps
        late = [("w", 0.0)] * 30 + [("w", 1.0)] * (steps - 30)
        worlds = [world(1, ref), world(2, late, late)]
        report = divergence_report(worlds, first_divergence(worlds))
        rows = [line for line in report.splitlines() if line.strip()[:2].strip().isdigit()]
        self.assertLessEqual(len(rows), MAX_ROWS)
        self.assertEqual(int(rows[0].split()[0]), 28)
        self.assertEqual(int(rows[-1].split()[0]), steps - 1)


def run(size, status=Status.PASSED, message="", *per_rank_calls):
    return WorldRun(size, Verdict(status, message, message), {r: records(*c) for r, c in enumerate(per_rank_calls)})


class TestVerdict(TestCase):
    spec = WorldsSpec((1, 2))

    def test_worlds_that_pass_and_agree_pass(self):
        verdict = worlds_verdict(self.spec, [run(1, Status.PASSED, "", [("x", 1)]), run(2, Status.PASSED, "",
                                                                                      [("x", 1)], [("x", 1)])])
        self.assertIs(verdict.verdict.status, Status.PASSED)
        raise_worlds_verdict(verdict)

    def test_values_that_part_raise_worlds_disagree(self):
        verdict = worlds_verdict(self.spec, [run(1, Status.PASSED, "", [("x", 1)]),
                                             run(2, Status.PASSED, "", [("x", 2)], [("x", 2)])])
        with self.assertRaises(WorldsDisagree) as caught:
            raise_worlds_verdict(verdict)
        self.assertIsInstance(caught.exception, AssertionError)
        self.assertEqual(caught.exception.headline, "the worlds disagree: 'x' step 0: world 2 differs from world 1 "
                                                    "(the reference)")

    def test_a_world_that_fails_is_named_and_earlier_partings_follow(self):
        verdict = worlds_verdict(self.spec, [run(1, Status.PASSED, "", [("x", 1)]),
                                             run(2, Status.FAILED, "rank 1 failed: AssertionError", [("x", 3)],
                                                 [("x", 3)])])
        with self.assertRaises(RankFailure) as caught:
            raise_worlds_verdict(verdict)
        self.assertEqual(caught.exception.headline, "world 2: rank 1 failed: AssertionError")
        self.assertIn("1 world of 2 did not pass (world 2)", str(caught.exception))
        self.assertIn("the values had parted already", str(caught.exception))
        errored = worlds_verdict(self.spec, [run(1, Status.ERROR, "rank 0 timed out"), run(2)])
        with self.assertRaises(RankError):
            raise_worlds_verdict(errored)

    def test_nothing_compared_fails(self):
        verdict = worlds_verdict(self.spec, [run(1), run(2)])
        self.assertIs(verdict.verdict.status, Status.FAILED)
        self.assertIn("nothing was compared: worlds 1, 2 passed", verdict.verdict.message)

    def test_a_skip_names_its_world_but_never_hides_a_failure(self):
        spec = WorldsSpec((1, 2, 4))
        agree = worlds_verdict(spec, [run(1, Status.PASSED, "", [("x", 1)]), run(2, Status.PASSED, "", [("x", 1)]),
                                      run(4, Status.SKIPPED, "needs 4 CUDA devices")])
        self.assertIs(agree.verdict.status, Status.SKIPPED)
        self.assertEqual(agree.verdict.message, "world 4 skipped: needs 4 CUDA devices; worlds 1, 2 ran and agree")
        with self.assertRaises(unittest.SkipTest):
            raise_worlds_verdict(agree)
        parted = worlds_verdict(spec, [run(1, Status.PASSED, "", [("x", 1)]), run(2, Status.PASSED, "", [("x", 2)]),
                                       run(4, Status.SKIPPED, "needs 4 CUDA devices")])
        self.assertIs(parted.verdict.status, Status.FAILED)


class TestRecords(TestCase):
    def test_a_rank_writes_each_call_as_it_returns_and_a_cut_record_is_left_out(self):
        with tempfile.TemporaryDirectory() as directory:
            compare = Recorder(records_file(directory, 1))
            compare("loss", 0.5)
            compare("w", torch.ones(2))
            compare("loss", 0.25)
            with open(records_file(directory, 1), "ab") as file:
                file.write(pickle.dumps(Record(9, "cut", 0, False, "", 1.0))[:-5])  # a rank that died mid-write
            found = read_records(directory, 3)
        self.assertEqual(found[0], [])
        self.assertEqual([(r.name, r.step, r.seq) for r in found[1]], [("loss", 0, 0), ("w", 0, 1), ("loss", 1, 2)])
        line = self._line_of('compare("loss", 0.5)')
        self.assertEqual(found[1][0].line, f"{os.path.basename(__file__)}:{line}")

    def _line_of(self, text):
        with open(__file__) as source:
            return next(number for number, line in enumerate(source, 1) if text in line)

    def test_a_name_keeps_one_way_of_comparing(self):
        with tempfile.TemporaryDirectory() as directory:
            compare = Recorder(records_file(directory, 0))
            compare("r", 1, per_rank=True)
            with self.assertRaisesRegex(ValueError, "a name keeps one way of comparing"):
                compare("r", 1)
            with self.assertRaisesRegex(TypeError, "name must be a non-empty string"):
                compare("", 1)


if __name__ == "__main__":
    run_tests()
