"""The test models the bases offer (through the faces ``common_fsdp`` and ``common_dtensor``).

- ``hf_bert``: the BERT size for this machine (upstream's on an accelerator, smaller on CPU);
- ``dtensor_models``: ``MLPModule``, ``MLPStacked``, ``RMSNormPython``, ``ModelArgs``,
  ``Transformer`` and its parts;
- ``transformer_parallel``: ``Transformer.parallelize`` and the experts' parallel styles;
- ``fsdp2_models``: ``MLP``, ``MLPStack`` and ``DoubleLinear``, the ``fully_shard`` test models;
- ``fsdp1_models``: ``FSDPTestModel``, ``TransformerWithSharedParams``, ``NestedWrappedModule``
  and ``AlwaysWrapNestedWrappedModule``, built with or without FSDP1 wrapping;
- ``fsdp1_variants``: ``NonUniformReqGradNWM``, ``ModuleWithDelay``,
  ``NestedWrappedModuleWithDelay``, ``MixtureOfExperts`` and ``DummyDDP``;
- ``fsdp_skip_models``: ``SkipModel``, ``SkipModule`` and ``NestedLinear``;
- ``state_dict_models``: ``FusionEmbedding`` and its hooked variants (state-dict keys renamed);
- ``forward_inputs_models``: ``SaveForwardInputsModel``, which records each module's input;
- ``two_tensor_subclass``: ``TwoTensor``, a tensor subclass that runs every op on two tensors;
- ``composable_models``: ``UnitModule``, ``CompositeModel``, ``CompositeParamModel`` & co, the
  composable APIs' test models.
"""
