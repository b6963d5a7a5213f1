"""COKE: core kernels for multiple kernel clustering (Liang et al., ICML 2025)."""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
