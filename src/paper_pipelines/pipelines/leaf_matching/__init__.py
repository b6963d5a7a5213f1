"""leaf_matching: Complete-Tree Space Favors Data-Efficient Link Prediction (Chi Gao, Lukai Li,
Yancheng Zhou, Shangqi Guo; ICML 2025, PMLR 267).

Spec: ../shared/papers/leaf_matching.md. Page: docs/papers/leaf_matching.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
