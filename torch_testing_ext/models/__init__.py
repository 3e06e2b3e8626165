"""Test models and their sizes.

- ``hf_bert``: the BERT size for this machine (upstream's on an accelerator, smaller on CPU).
"""
