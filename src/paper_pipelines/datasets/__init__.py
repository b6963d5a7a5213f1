"""Project-owned Kedro datasets."""

from paper_pipelines.datasets.causal_lm import CausalLMDataset
from paper_pipelines.datasets.torch_dataset import TorchDataset

__all__ = ["CausalLMDataset", "TorchDataset"]
