"""ood_chameleon: OOD-Chameleon: Is Algorithm Selection for OOD Generalization Learnable?
(Liangze Jiang, Damien Teney; ICML 2025, PMLR 267).

Spec: ../shared/papers/ood_chameleon.md. Page: docs/papers/ood_chameleon.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
