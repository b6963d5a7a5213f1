"""les: Mitigating Over-Exploration in Latent Space Optimization Using LES (Ronen, Humayun, Baraniuk,
Balestriero, Yu; ICML 2025). Official code: OmerRonen/les.

Spec: ../shared/papers/les.md. Page: docs/papers/les.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
