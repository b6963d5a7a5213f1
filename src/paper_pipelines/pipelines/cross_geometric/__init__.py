"""cross_geometric: Analytical Construction on Geometric Architectures: Transitioning from Static to
Temporal Link Prediction (Yadong Sun, Xiaofeng Cao, Ivor Tsang, Heng Tao Shen; ICML 2025).

No official code exists; the model here is the spec's reconstruction, called CGDyn-R throughout, on
HTGN's discrete-time protocol. Spec: ../shared/papers/cross_geometric.md. Page:
docs/papers/cross_geometric.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
