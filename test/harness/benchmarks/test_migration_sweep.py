"""Self-tests of ``benchmarks/migration_sweep.py`` on a few tiny upstream-style files written to a
temporary directory (no upstream file, no network): which files count as tests, the names each
lacks, the names ordered by how many files need them, the CPU column, and the printed report."""

import contextlib
import importlib.util
import io
import pathlib
import sys
import tempfile
import textwrap
from unittest import mock

from torch_testing_ext.common_utils import TestCase

from fixtures.paths import REPO

SCRIPT = REPO / "benchmarks" / "migration_sweep.py"
spec = importlib.util.spec_from_file_location("migration_sweep", SCRIPT)
sweep = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = sweep
spec.loader.exec_module(sweep)

# Written with "torch.testing" + "._internal" so no file of this repository imports upstream's harness.
UPSTREAM = "torch.testing" + "._internal"
FILES = {
    # resolves; names gloo, so CPU-meaningful
    "test_fine.py": f"""
        from {UPSTREAM}.common_utils import TestCase, run_tests
        BACKEND = "gloo"
        """,
    # two names we lack, one of them also lacked by sub/test_two.py; nccl only
    "test_one.py": f"""
        from {UPSTREAM}.common_utils import run_tests, NotProvidedA
        from {UPSTREAM} import common_fsdp
        common_fsdp.NotProvidedB
        dist.init_process_group("nccl")
        """,
    "sub/test_two.py": f"""
        import {UPSTREAM}.common_utils as cu
        cu.NotProvidedA
        """,
    # a helper, not a test file: its missing name is not counted
    "sub/_helper.py": f"""
        from {UPSTREAM}.common_utils import NotProvidedC
        """,
}


class TestMigrationSweep(TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        for name, text in FILES.items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text(textwrap.dedent(text))

    def tearDown(self):
        self.tmp.cleanup()

    def test_checks_test_files_and_orders_names_by_files_needing_them(self):
        files = sweep.test_files(self.root)
        self.assertEqual(files, ["test_fine.py", "test_one.py", "sub/test_two.py"])
        checks = {c.path: c for c in sweep.check_all(self.root, files, jobs=1)}
        self.assertEqual(checks["test_fine.py"].missing, [])
        self.assertTrue(checks["test_fine.py"].resolves)
        self.assertEqual(checks["test_one.py"].missing, ["torch_testing_ext.common_fsdp.NotProvidedB",
                                                         "torch_testing_ext.common_utils.NotProvidedA"])
        self.assertEqual(checks["sub/test_two.py"].missing, ["torch_testing_ext.common_utils.NotProvidedA"])
        needs = [(n.name, len(n.files), n.alone) for n in sweep.name_needs(checks.values())]
        self.assertEqual(needs, [("torch_testing_ext.common_utils.NotProvidedA", 2, 1),
                                 ("torch_testing_ext.common_fsdp.NotProvidedB", 1, 0)])

    def test_cpu_column(self):
        self.assertEqual(sweep.classify('dist.init_process_group("gloo")'), ("cpu", ["gloo"]))
        self.assertEqual(sweep.classify("class T(DTensorTestBase): pass\n@skip_if_lt_x_gpu(2)"),
                         ("cpu", ["DTensor base"]))
        self.assertEqual(sweep.classify('@requires_nccl()\nx.cuda()'), ("accelerator", ["nccl", "cuda"]))
        self.assertEqual(sweep.classify("assert 1 + 1 == 2"), ("no backend", []))
        # gloo named, but every test gated to accelerators: by its own decorators or its class's
        gated = textwrap.dedent("""
            BACKEND = "gloo"
            class A(MultiProcessTestCase):
                @skip_if_lt_x_gpu(2)
                @requires_nccl()
                def test_a(self):
                    pass

                @unittest.skipIf(
                    not TEST_MULTIGPU, "needs 2 GPUs"
                )
                def test_b(self):
                    pass

            @requires_nccl()
            class B(MultiProcessTestCase):
                def test_c(self):
                    pass
            """)
        self.assertEqual(sweep.classify(gated), ("accelerator", ["every test GPU-gated (3)"]))
        self.assertEqual(sweep.classify(gated + "class C:\n    def test_d(self):\n        pass\n"),
                         ("cpu", ["gloo", "3/4 tests GPU-gated"]))
        self.assertEqual(sweep.classify('import sys\nif not TEST_CUDA:\n    print("no")\n    sys.exit(0)\n"gloo"'),
                         ("accelerator", ["exits without an accelerator"]))

    def test_upstream_names(self):
        self.assertEqual(sweep.upstream_name("torch_testing_ext.common_utils.X"), f"{UPSTREAM}.common_utils.X")
        self.assertEqual(sweep.upstream_name("torch_testing_ext.dynamo_test_case.X"), "torch._dynamo.test_case.X")
        self.assertEqual(sweep.short_name("torch_testing_ext.distributed.fake_pg.X"), "distributed.fake_pg.X")

    def test_report_from_the_command_line(self):
        (self.root / "UPSTREAM_COMMIT").write_text("0123abc\n")
        (self.root / "sub" / "test_broken.py").write_text("def f(:\n")
        stdout, stderr = io.StringIO(), io.StringIO()
        with mock.patch.object(sweep, "upstream_has", lambda names: dict.fromkeys(names, False)), \
                contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            self.assertEqual(sweep.main([str(self.root)]), 0)
        out = stdout.getvalue()
        self.assertIn("upstream commit: 0123abc", out)
        self.assertIn("test files: 4", out)
        self.assertIn("files whose imports all resolve: 1", out)
        self.assertIn("files that could not be read or parsed: 1", out)
        self.assertIn(f"| 2 | 1 | common_utils.NotProvidedA | {UPSTREAM}.common_utils.NotProvidedA | no |", out)
        self.assertRegex(out, r"test_one\.py +accelerator \(nccl\) +missing: common_fsdp\.NotProvidedB, "
                              r"common_utils\.NotProvidedA")
        self.assertIn("sub/test_broken.py", out)
        self.assertEqual(out.split("## CPU-meaningful files whose imports all resolve")[1].split(),
                         ["test_fine.py", "(cpu:", "gloo)"])
        self.assertIn("[4/4]", stderr.getvalue())

    def test_files_from(self):
        listing = self.root / "list.txt"
        listing.write_text("# just one\nsub/test_two.py\n")
        args = sweep.parse_args([str(self.root), "--files-from", str(listing)])
        self.assertEqual(sweep.test_files(self.root, args.only), ["sub/test_two.py"])
        listing.write_text("sub/absent.py\n")
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as exit_:
            sweep.parse_args([str(self.root), "--files-from", str(listing)])
        self.assertEqual(exit_.exception.code, 2)

    def test_asks_the_installed_torch_which_names_it_has(self):
        real, made_up = f"{UPSTREAM}.common_utils.run_tests", f"{UPSTREAM}.common_utils.NotProvidedA"
        self.assertEqual(sweep.upstream_has([real, made_up]), {real: True, made_up: False})
