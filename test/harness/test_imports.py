"""What importing the package does in a fresh interpreter, checked in one subprocess: it
imports without a GPU, transformers or triton, never imports torch's private harness
(``torch.testing._internal.common_utils`` / ``common_distributed``), and the ``fake_pg`` face
alone registers the ``fake`` backend. In this process: no source file imports the private
harness."""

import os
import re
import subprocess
import sys
import unittest

from fixtures.paths import REPO
from fixtures.runs import SHIPPED_SUITE_ENV

ROOT = str(REPO)
_PRIVATE_IMPORT = re.compile(r"^\s*(from|import)\s+torch\.testing\._internal", re.MULTILINE)

# Only a fresh interpreter shows these: in a test process torch._dynamo (which registers the
# fake backend too) and the whole package are long imported.
_PROBE = """
import importlib, pkgutil, sys
sys.modules['transformers'] = None  # a None entry makes the import fail, as if not installed
sys.modules['triton'] = None

# The fake_pg face alone registers the fake backend, without torch._dynamo.
import torch.distributed as dist
from torch_testing_ext.distributed.fake_pg import FakeStore
assert 'torch._dynamo' not in sys.modules, 'importing fake_pg imported torch._dynamo'
dist.init_process_group('fake', store=FakeStore(), rank=0, world_size=2)
assert dist.get_world_size() == 2, dist.get_world_size()
dist.destroy_process_group()

# Then every module of the package.
import torch_testing_ext
modules = [m.name for m in pkgutil.walk_packages(torch_testing_ext.__path__, 'torch_testing_ext.')]
assert 'torch_testing_ext.common_distributed' in modules and len(modules) > 30, modules
for name in modules:
    importlib.import_module(name)
from torch_testing_ext._engine.skips.distributed_skips import transformers_import_error
assert transformers_import_error(), 'transformers should look missing'
bad = [m for m in sys.modules if m in ('torch.testing._internal.common_utils',
                                       'torch.testing._internal.common_distributed')]
assert not bad, bad
print('ok')
"""


class TestImports(unittest.TestCase):
    def test_a_fresh_interpreter_imports_every_module_and_registers_fake(self):
        # The faces of torch's own suites read BACKEND and WORLD_SIZE as they are imported.
        completed = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                                   cwd=ROOT, timeout=120, env={**os.environ, **SHIPPED_SUITE_ENV})
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertEqual(completed.stdout.strip(), "ok")

    def test_no_source_file_imports_the_private_harness(self):
        offenders = []
        for top in ("torch_testing_ext", "test"):
            for folder, _, files in os.walk(os.path.join(ROOT, top)):
                for name in files:
                    if name.endswith(".py"):
                        path = os.path.join(folder, name)
                        with open(path) as f:
                            if _PRIVATE_IMPORT.search(f.read()):
                                offenders.append(os.path.relpath(path, ROOT))
        self.assertEqual(offenders, [])
