"""Self-tests of ``torch_testing_ext._engine.models.hf_bert``: the BERT size follows the device facts."""

import importlib.util
import os
import unittest
from unittest import mock

from torch_testing_ext import hf_bert as models
from torch_testing_ext.common_utils import TestCase

from fixtures.fake_devices import pretend_accelerator

HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None


class TestHFBertSize(TestCase):
    def setUp(self):
        super().setUp()
        patcher = mock.patch.dict(os.environ)
        patcher.start()
        self.addCleanup(patcher.stop)
        os.environ.pop(models.HF_BERT_ENV, None)

    def test_upstream_size_on_an_accelerator(self):
        with pretend_accelerator("cuda"):
            size = models.hf_bert_size()
        self.assertEqual(size, models.UPSTREAM_HF_BERT)
        self.assertEqual((size.batch_size, size.seq_len, dict(size.config_kwargs)), (4, 512, {}))

    def test_small_size_on_a_cpu_only_machine(self):
        with pretend_accelerator(None):
            size = models.hf_bert_size()
        self.assertEqual(size, models.CPU_HF_BERT)
        self.assertLess(size.seq_len, 512)
        self.assertLess(size.config_kwargs["num_hidden_layers"], 12)

    def test_environment_overrides_the_choice(self):
        os.environ[models.HF_BERT_ENV] = "upstream"
        with pretend_accelerator(None):
            self.assertEqual(models.hf_bert_size(), models.UPSTREAM_HF_BERT)
        os.environ[models.HF_BERT_ENV] = "cpu"
        with pretend_accelerator("cuda"):
            self.assertEqual(models.hf_bert_size(), models.CPU_HF_BERT)
        os.environ[models.HF_BERT_ENV] = "huge"
        with self.assertRaisesRegex(ValueError, "TORCH_TESTING_EXT_HF_BERT"):
            models.hf_bert_size()

    @unittest.skipUnless(HAS_TRANSFORMERS, "Unable to import transformers")
    def test_config_carries_the_size(self):
        from transformers import BertConfig

        with pretend_accelerator(None):
            config = models.hf_bert_config()
        for key, value in models.CPU_HF_BERT.config_kwargs.items():
            self.assertEqual(getattr(config, key), value)
        with pretend_accelerator("cuda"):
            self.assertEqual(models.hf_bert_config().to_dict(), BertConfig().to_dict())

    @unittest.skipUnless(HAS_TRANSFORMERS, "Unable to import transformers")
    def test_small_bert_still_spans_several_ddp_buckets(self):
        # DDP's default 25 MB buckets must still split the small BERT's graph, or the
        # DDPOptimizer tests that use it would no longer test splitting.
        import torch
        import torch._dynamo
        from transformers import AutoModelForMaskedLM

        from torch_testing_ext.fake_ddp import FakeDDP

        with pretend_accelerator(None):
            config = models.hf_bert_config()
            size = models.hf_bert_size()
        model = AutoModelForMaskedLM.from_config(config)
        graphs = []

        def count_graphs(gm, example_inputs):
            graphs.append(gm)
            return gm

        input_ids = torch.randint(0, config.vocab_size, (size.batch_size, size.seq_len))
        torch._dynamo.reset()
        with torch._dynamo.config.patch(optimize_ddp=True):
            torch.compile(FakeDDP(model), backend=count_graphs)(input_ids=input_ids)
        torch._dynamo.reset()
        self.assertGreaterEqual(len(graphs), 2)
