"""fedda: Federated Disentangled Tuning with Textual Prior Decoupling and Visual Dynamic Adaptation.

Yihao Yang, Wenke Huang, Guancheng Wan, Bin Yang, Mang Ye. ICML 2025 (PMLR 267:70745-70755).
Spec: ../shared/papers/fedda.md. Page: docs/papers/fedda.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
