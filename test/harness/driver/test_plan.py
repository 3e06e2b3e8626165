"""The shard planner (torch_testing_ext._engine.driver.plan): a pure function, tested on synthetic times."""

import random
import unittest
from collections import Counter

from torch_testing_ext._engine.driver.plan import (
    MIN_SPLIT_SECONDS,
    PlanEntry,
    files_to_split,
    plan_shards,
    split_threshold,
)
from torch_testing_ext._engine.driver.times import RecordedTimes

NAMES = [f"test_f{i:02d}" for i in range(20)] + [f"distributed/test_d{i}" for i in range(5)]


def synthetic_times(names, seed=0, low=1.0, high=300.0):
    rng = random.Random(seed)
    return RecordedTimes({name: round(rng.uniform(low, high), 2) for name in names})


def entries(shards):
    return [entry for shard in shards for entry in shard.entries]


def listing(per_class):
    """Test ids as ``python test/x.py --list`` gives them, from {class: number of tests}."""
    return [f"{cls}.test_{i}" for cls, count in per_class.items() for i in range(count)]


def coverage(shards, listed):
    """(file, test id) pairs the plan runs, counted; a whole-file entry covers all its tests."""
    counts = Counter()
    for entry in entries(shards):
        for test_id in listed.get(entry.name, ["<all>"]):
            cls = test_id.partition(".")[0]
            if not entry.selection or cls in entry.selection or test_id in entry.selection:
                counts[(entry.name, test_id)] += 1
    return counts


class TestPlanShards(unittest.TestCase):
    def test_same_inputs_same_plan(self):
        times = synthetic_times(NAMES)
        first = plan_shards(NAMES, times, 4, jobs=2)
        for seed in range(5):
            shuffled = list(NAMES)
            random.Random(seed).shuffle(shuffled)
            self.assertEqual(plan_shards(shuffled, times, 4, jobs=2), first)

    def test_every_file_in_exactly_one_shard(self):
        times = synthetic_times(NAMES[:15])  # the last ten have no recorded time
        for num_shards in range(1, 7):
            for given in (None, times):
                with self.subTest(num_shards=num_shards, times=given is not None):
                    shards = plan_shards(NAMES, given, num_shards)
                    self.assertEqual([s.index for s in shards], list(range(1, num_shards + 1)))
                    self.assertEqual(sorted(e.name for e in entries(shards)), sorted(NAMES))

    def test_every_test_in_exactly_one_shard_when_split(self):
        names = ["big", "distributed/test_big"] + [f"small{i}" for i in range(6)]
        times = RecordedTimes({n: 30.0 for n in names})
        listed = {}
        for name in ("big", "distributed/test_big"):
            times.files[name] = 900.0
            times.classes[name] = {f"C{i}": 100.0 + i for i in range(6)}
            times.classes[name]["Long"] = 290.0
            times.tests[name] = {f"Long.test_{i}": 290.0 / 9 for i in range(9)}
            # C6 is new (no recorded time) and so is Long.test_9.
            listed[name] = listing({**{f"C{i}": 2 for i in range(7)}, "Long": 10})
        for num_shards in range(1, 7):
            with self.subTest(num_shards=num_shards):
                shards = plan_shards(names, times, num_shards, listed=listed)
                counts = coverage(shards, listed)
                self.assertEqual(set(counts.values()), {1})
                expected = {(n, t) for n in listed for t in listed[n]}
                expected |= {(n, "<all>") for n in names if n not in listed}
                self.assertEqual(set(counts), expected)
                split = [e for e in entries(shards) if e.selection]
                long_enough = 900.0 > split_threshold(names, times, num_shards)
                self.assertEqual(bool(split), num_shards > 1 and long_enough)
                if num_shards >= 3:
                    self.assertTrue(split)

    def test_longest_first_balances_within_one_entry(self):
        names = [f"t{i}" for i in range(60)]
        for seed in range(5):
            times = synthetic_times(names, seed)
            for num_shards in (2, 3, 5):
                shards = plan_shards(names, times, num_shards)
                loads = [s.seconds for s in shards]
                longest = max(times.files.values())
                # Greedy longest-first: no shard exceeds the lightest by more than one entry.
                self.assertLessEqual(max(loads) - min(loads), longest)
                # ...and in practice it is far better than that on uniform times.
                self.assertLess(max(loads) / (sum(loads) / num_shards), 1.15)
                self.assertAlmostEqual(sum(loads), sum(times.files.values()), places=6)

    def test_plan_is_better_than_round_robin(self):
        # Round-robin by name would put t0, t3 and t6 (the long ones) all in shard 1.
        names = [f"t{i}" for i in range(9)]
        times = RecordedTimes({n: (1000.0 if i % 3 == 0 else 10.0) for i, n in enumerate(names)})
        shards = plan_shards(names, times, 3)
        self.assertEqual([round(s.seconds) for s in shards], [1020, 1020, 1020])
        self.assertEqual([plan_shards(names, None, 3)[0].entries[i].name for i in range(3)],
                         ["t0", "t3", "t6"])

    def test_unknown_files_round_robin_at_mean_known_time(self):
        known = {"a": 100.0, "b": 50.0, "c": 30.0}
        unknown = [f"new{i}" for i in range(7)]
        shards = plan_shards(list(known) + unknown, RecordedTimes(dict(known)), 3)
        mean = sum(known.values()) / len(known)
        new_entries = [e for e in entries(shards) if e.name in unknown]
        self.assertEqual(len(new_entries), 7)
        for entry in new_entries:
            self.assertFalse(entry.known)
            self.assertAlmostEqual(entry.seconds, mean)
        per_shard = [sum(e.name in unknown for e in s.entries) for s in shards]
        self.assertEqual(sorted(per_shard), [2, 2, 3])
        # Dealt starting with the lightest shard (b+c=80 < a=100): the shard without "a" gets 3.
        shard_of_a = next(s for s in shards if any(e.name == "a" for e in s.entries))
        self.assertEqual(sum(e.name in unknown for e in shard_of_a.entries), 2)

    def test_selected_files_all_unknown_uses_mean_of_times_file(self):
        times = RecordedTimes({"elsewhere1": 10.0, "elsewhere2": 30.0})
        shards = plan_shards(["x", "y"], times, 2)
        self.assertEqual([[e.seconds for e in s.entries] for s in shards], [[20.0], [20.0]])

    def test_no_times_is_round_robin_by_name(self):
        names = ["d", "b", "a", "e", "c", "distributed/test_z"]
        for times in (None, RecordedTimes()):
            shards = plan_shards(names, times, 2)
            self.assertEqual({e.name for e in shards[0].entries}, {"a", "c", "distributed/test_z"})
            self.assertEqual({e.name for e in shards[1].entries}, {"b", "d", "e"})
            self.assertFalse(any(e.known for e in entries(shards)))
            self.assertEqual([s.seconds for s in shards], [0.0, 0.0])

    def test_serial_costs_full_time_parallel_divided_by_jobs(self):
        times = RecordedTimes({"distributed/test_a": 100.0, "p1": 100.0, "p2": 100.0})
        (shard,) = plan_shards(list(times.files), times, 1, jobs=4)
        self.assertAlmostEqual(shard.seconds, 100.0 + 200.0 / 4)
        self.assertEqual([e.serial for e in shard.entries], [False, False, True])

    def test_jobs_change_the_balance(self):
        names = ["distributed/test_a", "distributed/test_b", "p1", "p2", "p3", "p4"]
        times = RecordedTimes({n: 100.0 for n in names})
        serial_counts, loads = [], []
        for jobs in (1, 4):
            shards = plan_shards(names, times, 2, jobs=jobs)
            serial_counts.append(sorted(sum(e.serial for e in s.entries) for s in shards))
            loads.append([s.seconds for s in shards])
            self.assertLessEqual(max(loads[-1]) - min(loads[-1]), 100.0)
        self.assertEqual(serial_counts, [[1, 1], [1, 1]])
        # Each shard: one serial file (100 s) and two parallel ones (200 s, or 200 / 4 s).
        self.assertEqual(loads, [[300.0, 300.0], [150.0, 150.0]])

    def test_running_order_parallel_first_then_longest_first(self):
        times = RecordedTimes({"distributed/test_s1": 5.0, "distributed/test_s2": 50.0,
                               "p1": 1.0, "p2": 10.0, "p3": 3.0})
        (shard,) = plan_shards(list(times.files), times, 1)
        self.assertEqual([e.name for e in shard.entries],
                         ["p2", "p3", "p1", "distributed/test_s2", "distributed/test_s1"])

    def test_rejects_nonsense(self):
        with self.assertRaises(ValueError):
            plan_shards(["a"], None, 0)
        with self.assertRaises(ValueError):
            plan_shards(["a"], None, 1, jobs=0)

    def test_more_shards_than_files(self):
        shards = plan_shards(["a", "b"], RecordedTimes({"a": 5.0, "b": 3.0}), 5)
        self.assertEqual([len(s.entries) for s in shards], [1, 1, 0, 0, 0])


class TestClassSplitting(unittest.TestCase):
    def times(self):
        return RecordedTimes(
            files={"big": 1000.0, "mid": 120.0, "small": 50.0, "one_class": 900.0},
            classes={"big": {"A": 500.0, "B": 300.0, "C": 150.0, "D": 10.0},
                     "mid": {"X": 60.0, "Y": 50.0},
                     "one_class": {"Only": 880.0}},
        )

    BIG = listing({"A": 1, "B": 1, "C": 1, "D": 1})

    def test_threshold_is_ideal_shard_length_with_a_floor(self):
        times = self.times()
        self.assertEqual(split_threshold(list(times.files), times, 2), 1035.0)
        self.assertEqual(split_threshold(list(times.files), times, 4), 517.5)
        self.assertEqual(split_threshold(["small"], times, 4), MIN_SPLIT_SECONDS)

    def test_files_to_split(self):
        times = self.times()
        names = list(times.files)
        self.assertEqual(files_to_split(names, times, 1), [])
        self.assertEqual(files_to_split(names, times, 2), [])
        # one_class is long but has a single class and no test times: nothing to split it by.
        self.assertEqual(files_to_split(names, times, 4), ["big"])
        self.assertEqual(files_to_split(names, times, 4, threshold=100.0), ["big", "mid"])
        self.assertEqual(files_to_split(names, None, 4), [])
        times.tests["one_class"] = {"Only.test_a": 440.0, "Only.test_b": 440.0}
        self.assertEqual(files_to_split(names, times, 4), ["big", "one_class"])

    def test_split_groups_classes_and_adds_overhead(self):
        times = self.times()
        shards = plan_shards(["big"], times, 4, listed={"big": self.BIG}, threshold=400.0)
        split = sorted(entries(shards), key=lambda e: e.selection)
        # ceil(1000 / 400) = 3 groups, longest class first to the lightest group.
        self.assertEqual([e.selection for e in split], [("A",), ("B",), ("C", "D")])
        overhead = 1000.0 - (500 + 300 + 150 + 10)
        self.assertEqual([e.seconds for e in split], [500 + overhead, 300 + overhead, 160 + overhead])
        self.assertTrue(all(e.known for e in split))
        self.assertEqual(len({s.index for s in shards if s.entries}), 3)

    def test_listed_classes_decide(self):
        times = self.times()
        listed = {"big": listing({"A": 1, "B": 1, "E": 3})}
        shards = plan_shards(["big"], times, 2, listed=listed, threshold=100.0)
        self.assertEqual(sorted(c for e in entries(shards) for c in e.selection), ["A", "B", "E"])
        # E has no recorded time: it is counted at the mean of the file's known classes.
        (with_e,) = [e for e in entries(shards) if "E" in e.selection]
        overhead = 1000.0 - 960.0
        self.assertAlmostEqual(with_e.seconds, 400.0 + overhead)

    def test_not_split_without_listing_or_class_times(self):
        times = self.times()
        for listed in ({}, {"big": ["A.test_0"]}, {"big": ["Q.test_0", "R.test_0"]}):
            with self.subTest(listed=listed):
                shards = plan_shards(["big"], times, 2, listed=listed, threshold=100.0)
                self.assertEqual([e.selection for e in entries(shards)], [()])

    def test_distributed_split_entries_stay_serial(self):
        times = RecordedTimes({"distributed/test_x": 600.0},
                              {"distributed/test_x": {"A": 300.0, "B": 300.0}})
        shards = plan_shards(["distributed/test_x"], times, 2,
                             listed={"distributed/test_x": ["A.test_a", "B.test_b"]})
        self.assertEqual([[e.serial for e in s.entries] for s in shards], [[True], [True]])
        self.assertEqual(entries(shards)[0].label, "distributed/test_x [A]")

    def test_entry_label_and_cost(self):
        entry = PlanEntry("f", selection=("A", "B"), seconds=100.0, known=True)
        self.assertEqual(entry.label, "f [A, B]")
        self.assertEqual(entry.selection_for("B.test_x"), ("B.test_x",))
        self.assertEqual(entry.selection_for(""), ("A", "B"))
        tests = PlanEntry("f", selection=("A", "B.test_x", "B.test_y", "C.test_z"), seconds=100.0,
                          known=True)
        self.assertEqual(tests.label, "f [A, B: 2 tests, C: 1 test]")
        self.assertEqual(entry.cost(4), 25.0)
        self.assertEqual(PlanEntry("distributed/f", seconds=100.0, known=True, serial=True).cost(4),
                         100.0)


class TestSplittingOneLongClass(unittest.TestCase):
    """A class too long for one shard is split by test, using the recorded test times."""

    def times(self):
        tests = {f"Long.test_{i}": float(10 * (i + 1)) for i in range(10)}  # 10..100 s
        return RecordedTimes(
            files={"distributed/test_x": 630.0, "small": 600.0},
            classes={"distributed/test_x": {"Long": sum(tests.values()), "Short": 20.0}},
            tests={"distributed/test_x": tests},
        )

    LISTED = {"distributed/test_x": listing({"Long": 10, "Short": 2})}

    def test_long_class_split_by_test_balances_shards(self):
        times = self.times()
        for num_shards in (2, 3, 4):
            with self.subTest(num_shards=num_shards):
                shards = plan_shards(list(times.files), times, num_shards, listed=self.LISTED)
                counts = coverage(shards, self.LISTED)
                self.assertEqual(sorted(counts), sorted(("distributed/test_x", t)
                                                         for t in self.LISTED["distributed/test_x"])
                                 + [("small", "<all>")])
                self.assertEqual(set(counts.values()), {1})
                split = [e for e in entries(shards) if e.name == "distributed/test_x"]
                self.assertGreaterEqual(len(split), num_shards - 1)
                # The short class stays whole; the long one is named test by test.
                self.assertTrue(any("Short" in e.selection for e in split))
                self.assertFalse(any("Long" in e.selection for e in split))
                loads = [s.seconds for s in shards]
                mean = sum(loads) / num_shards
                # Only "small" (600 s, one entry) may stick out once shards are shorter than it.
                self.assertLess(max(loads) / mean, 1.10 if num_shards == 2 else 600.0 / mean + 0.01)

    def test_tests_of_a_class_keep_their_order(self):
        times = self.times()
        shards = plan_shards(list(times.files), times, 2, listed=self.LISTED)
        for entry in entries(shards):
            self.assertEqual(list(entry.selection), sorted(entry.selection))

    def test_unrecorded_test_counted_at_class_mean(self):
        times = self.times()
        listed = {"distributed/test_x": self.LISTED["distributed/test_x"] + ["Long.test_new"]}
        shards = plan_shards(["distributed/test_x"], times, 2, listed=listed)
        total = sum(e.seconds for e in entries(shards))
        overhead = 630.0 - 570.0
        self.assertAlmostEqual(total, 570.0 + 55.0 + overhead * len(entries(shards)))

    def test_class_without_test_times_stays_whole(self):
        times = self.times()
        times.tests.clear()
        shards = plan_shards(["distributed/test_x"], times, 2, listed=self.LISTED)
        self.assertEqual(sorted(e.selection for e in entries(shards)), [("Long",), ("Short",)])
