"""multilabel_bounds: Tight and Fast Bounds for Multi-Label Learning (Yi-Fan Zhang, Min-Ling Zhang; ICML 2025, PMLR 267).

A theory paper without experiments: the pipeline is an empirical study of its predictions (spec P1-P4).

Spec: ../shared/papers/multilabel_bounds.md. Page: docs/papers/multilabel_bounds.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
