"""si_pipeline: selective inference for feature-selection pipelines declared as Kedro DAGs.

Shiraishi, Matsukawa, Nishino & Takeuchi, "Statistical Test for Feature Selection Pipelines by
Selective Inference" (arXiv 2406.18902).
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
