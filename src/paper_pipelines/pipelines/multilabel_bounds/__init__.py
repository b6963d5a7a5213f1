"""multilabel_bounds: <paper title> (<authors>, <venue year>).

Spec: ../shared/papers/multilabel_bounds.md. Page: docs/papers/multilabel_bounds.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
