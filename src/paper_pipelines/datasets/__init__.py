"""Project-owned Kedro datasets."""

from paper_pipelines.datasets.array_tree import ArrayTreeDataset
from paper_pipelines.datasets.causal_lm import CausalLMDataset
from paper_pipelines.datasets.clip_folder import ClipFolderDataset
from paper_pipelines.datasets.sdf import SDFDataset
from paper_pipelines.datasets.skops_dataset import SkopsDataset
from paper_pipelines.datasets.torch_dataset import TorchDataset
from paper_pipelines.datasets.vision_folders import CifarFolderDataset, ResNetCheckpointDataset

__all__ = [
    "ArrayTreeDataset",
    "CausalLMDataset",
    "CifarFolderDataset",
    "ClipFolderDataset",
    "ResNetCheckpointDataset",
    "SDFDataset",
    "SkopsDataset",
    "TorchDataset",
]
