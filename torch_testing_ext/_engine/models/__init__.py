"""The test models the bases and faces offer.

- ``composable_models``: ``UnitModule``, ``CompositeModel``, ``CompositeParamModel`` & co, the
  composable APIs' test models;
- ``dtensor_models``: ``MLPModule``, ``MLPStacked``, ``RMSNormPython``, ``ModelArgs``,
  ``Transformer`` and its parts;
- ``forward_inputs_models``: ``SaveForwardInputsModel``, which records each module's input;
- ``fsdp1_models``: ``FSDPTestModel``, ``TransformerWithSharedParams``, ``NestedWrappedModule``
  and ``AlwaysWrapNestedWrappedModule``, built with or without FSDP1 wrapping;
- ``fsdp1_variants``: ``NonUniformReqGradNWM``, ``ModuleWithDelay``,
  ``NestedWrappedModuleWithDelay``, ``MixtureOfExperts`` and ``DummyDDP``;
- ``fsdp2_models``: ``MLP``, ``MLPStack`` and ``DoubleLinear``, the ``fully_shard`` test models;
- ``fsdp_skip_models``: ``SkipModel``, ``SkipModule`` and ``NestedLinear``;
- ``megatron_model``: ``SimpleMegatronLM``, two linear layers for sharding-plan tests;
- ``pruning_models``: ``common_pruning``'s models (``SimpleLinear``, ``Conv2dPool`` & co),
  ``ImplementedSparsifier``, ``MockSparseLinear`` and ``rows_are_subset``;
- ``quantization_models``: ``TestHelperModules``, the models quantization tests export and
  count the nodes of, and upstream's module-level models (``ConvModel``, ``LinearAddModel``...);
- ``sharded_models``: ``MyShardedModel1``/``MyShardedModel2``, modules holding sharded tensors;
- ``state_dict_models``: ``FusionEmbedding`` and its hooked variants (state-dict keys renamed);
- ``transformer_parallel``: ``Transformer.parallelize`` and the experts' parallel styles;
- ``two_tensor_subclass``: ``TwoTensor``, a tensor subclass that runs every op on two tensors.
"""
