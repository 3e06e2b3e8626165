"""The gradcheck names OpInfo modules read (torch_testing_ext._engine.testcase.autograd_checks):
``GRADCHECK_NONDET_TOL`` and ``skipIfSlowGradcheckEnv``, which skips only in a run with
``PYTORCH_TEST_WITH_SLOW_GRADCHECK=1`` (read at import, so in a fresh interpreter)."""

import json
import subprocess
import sys

from torch_testing_ext.common_utils import GRADCHECK_NONDET_TOL, TestCase

from fixtures.runs import checkout_env

_SKIP_STATE = ("import json\n"
               "from torch_testing_ext.common_utils import OPINFO_SAMPLE_INPUT_INDEX, skipIfSlowGradcheckEnv\n"
               "def test_x(self): pass\n"
               "marked = skipIfSlowGradcheckEnv(test_x)\n"
               "print(json.dumps([getattr(marked, '__unittest_skip__', False),"
               " getattr(marked, '__unittest_skip_why__', ''), OPINFO_SAMPLE_INPUT_INDEX]))\n")


def child_state(**env):
    completed = subprocess.run([sys.executable, "-c", _SKIP_STATE], capture_output=True, text=True,
                               env=checkout_env(**env), timeout=300)
    if completed.returncode != 0:
        raise AssertionError(completed.stderr[-3000:])
    return json.loads(completed.stdout.splitlines()[-1])


class TestGradcheckNames(TestCase):
    def test_nondeterministic_tolerance(self):
        self.assertEqual(GRADCHECK_NONDET_TOL, 1e-12)

    def test_skip_if_slow_gradcheck_env_and_the_sample_index_setting(self):
        self.assertEqual(child_state(PYTORCH_TEST_WITH_SLOW_GRADCHECK=None, PYTORCH_OPINFO_SAMPLE_INPUT_INDEX=None),
                         [False, "", None])
        self.assertEqual(child_state(PYTORCH_TEST_WITH_SLOW_GRADCHECK="1", PYTORCH_OPINFO_SAMPLE_INPUT_INDEX="3"),
                         [True, "Tests that don't use gradcheck don't need to run on slow_gradcheck CI", 3])
