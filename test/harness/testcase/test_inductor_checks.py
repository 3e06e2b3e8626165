"""Self-tests of ``_check_has_dynamic_shape`` and ``clone_preserve_strides_offset``
(``_engine/testcase/inductor_checks.py``, face ``inductor_utils``)."""

import torch

from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.inductor_utils import _check_has_dynamic_shape, clone_preserve_strides_offset

SYMBOLIC = "extern \"C\" void kernel(float* in_ptr0, const int64_t ks0)\n{\n" \
           "    for(int64_t x0=0L; x0<static_cast<int64_t>(ks0); x0+=1L)\n    {\n    }\n}"
STATIC = "void kernel(float* in_ptr0)\n{\n    for(int64_t x0=0L; x0<16L; x0+=1L)\n    {\n    }\n}"


class TestCheckHasDynamicShape(TestCase):
    def test_a_loop_bounded_by_a_symbolic_size_passes(self):
        _check_has_dynamic_shape(self, SYMBOLIC)

    def test_a_static_bound_or_no_loop_fails(self):
        with self.assertRaisesRegex(AssertionError, "Failed to find dynamic for loop variable"):
            _check_has_dynamic_shape(self, STATIC)
        with self.assertRaisesRegex(AssertionError, "Failed to find dynamic for loop variable"):
            _check_has_dynamic_shape(self, "return ks0;")


class TestClonePreserveStridesOffset(TestCase):
    def test_layout_and_storage_kept(self):
        base = torch.arange(24.0)
        view = base[3:].as_strided((3, 4), (1, 5), 2)
        copy = clone_preserve_strides_offset(view)
        self.assertEqual((copy.stride(), copy.storage_offset()), (view.stride(), view.storage_offset()))
        self.assertEqual(copy, view)
        self.assertEqual(copy.untyped_storage().size(), view.untyped_storage().size())
        self.assertNotEqual(copy.untyped_storage().data_ptr(), view.untyped_storage().data_ptr())
        view.zero_()  # the copy does not share memory
        self.assertEqual(copy[0, 0].item(), 2.0)

    def test_device_and_non_tensors(self):
        t = torch.ones(2, 3).t()
        on_cpu = clone_preserve_strides_offset(t, device="cpu")
        self.assertEqual(on_cpu.stride(), (1, 3))
        self.assertNotEqual(on_cpu.data_ptr(), t.data_ptr())
        marker = object()
        self.assertIs(clone_preserve_strides_offset(marker), marker)
