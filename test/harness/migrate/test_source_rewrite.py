"""The migration's rule on source text, stdlib only (torch_testing_ext._engine.migrate.source_rewrite).

It must give, on every fixture the LibCST migration is checked on, exactly the migration's
expected output; keep every line where it was; and leave strings, comments and code that
merely resembles an upstream path alone.
"""

import unittest

from torch_testing_ext._engine.migrate.source_rewrite import rewrite_source

from fixtures.paths import FIXTURES

TREE = FIXTURES / "migrate_tree"
EXPECTED = FIXTURES / "migrate_expected"


class TestSourceRewrite(unittest.TestCase):
    def test_gives_the_migrations_expected_output_on_its_fixtures(self):
        sources = sorted(TREE.rglob("*.py.txt"))
        self.assertGreaterEqual(len(sources), 3)
        for source in sources:
            with self.subTest(source.name):
                expected = (EXPECTED / source.relative_to(TREE)).read_text(encoding="utf-8")
                self.assertEqual(rewrite_source(source.read_text(encoding="utf-8")), expected)

    def test_every_import_form_and_dotted_use(self):
        before = (
            "import torch.testing._internal.dist_utils\n"
            "import torch.testing._internal.common_utils as cu, os\n"
            "from torch.testing._internal.common_distributed import (\n"
            "    MultiProcessTestCase,\n"
            ")\n"
            "from torch.testing._internal import common_utils\n"
            "from torch._dynamo.test_case import run_tests\n"
            "x = torch.testing._internal.dist_utils.INIT_METHOD_TEMPLATE\n"
            "torch._dynamo.test_case.run_tests()\n"
            "def f():\n"
            "    from torch.testing._internal.common_utils import parametrize\n"
        )
        after = (
            "import torch_testing_ext.dist_utils\n"
            "import torch_testing_ext.common_utils as cu, os\n"
            "from torch_testing_ext.common_distributed import (\n"
            "    MultiProcessTestCase,\n"
            ")\n"
            "from torch_testing_ext import common_utils\n"
            "from torch_testing_ext.dynamo_test_case import run_tests\n"
            "x = torch_testing_ext.dist_utils.INIT_METHOD_TEMPLATE\n"
            "torch_testing_ext.dynamo_test_case.run_tests()\n"
            "def f():\n"
            "    from torch_testing_ext.common_utils import parametrize\n"
        )
        self.assertEqual(rewrite_source(before), after)

    def test_leaves_strings_comments_lookalikes_and_relative_imports(self):
        source = (
            "NAME = 'torch.testing._internal.common_utils'  # torch.testing._internal\n"
            "import torch.testing\n"
            "from torch.testing import assert_close\n"
            "from .torch.testing._internal import x\n"
            "y = other.torch.testing._internal\n"
            "import torch.testing._internal_not_it\n"
        )
        self.assertEqual(rewrite_source(source), source)

    def test_keeps_lines_where_they_are_also_after_non_ascii_text(self):
        source = ("s = 'é' ; import torch.testing._internal.common_utils as cu\n"
                  "t = 'ü' ; u = torch.testing._internal.common_utils.TestCase\n"
                  "\n\n"
                  "from torch.testing._internal.common_utils import \\\n    run_tests\n")
        rewritten = rewrite_source(source)
        self.assertEqual(rewritten.splitlines()[0], "s = 'é' ; import torch_testing_ext.common_utils as cu")
        self.assertEqual(rewritten.splitlines()[1], "t = 'ü' ; u = torch_testing_ext.common_utils.TestCase")
        self.assertEqual(len(rewritten.splitlines()), len(source.splitlines()))
        self.assertEqual(rewritten.splitlines()[4], "from torch_testing_ext.common_utils import \\")

    def test_rewriting_twice_changes_nothing_more(self):
        once = rewrite_source((TREE / "test_utils_forms.py.txt").read_text(encoding="utf-8"))
        self.assertEqual(rewrite_source(once), once)

    def test_an_upstream_path_split_over_lines_is_refused_not_left_behind(self):
        source = "x = (torch.testing\n     ._internal.common_utils.TestCase)\n"
        with self.assertRaisesRegex(SyntaxError, r"line 1: torch.testing._internal spans lines 1-2"):
            rewrite_source(source)

    def test_source_that_does_not_parse_is_a_syntax_error_naming_the_file(self):
        with self.assertRaises(SyntaxError) as caught:
            rewrite_source("def broken(:\n", "suite.py")
        self.assertEqual(caught.exception.filename, "suite.py")
