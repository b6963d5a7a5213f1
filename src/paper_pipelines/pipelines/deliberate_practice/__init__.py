"""deliberate_practice: Improving the Scaling Laws of Synthetic Data with Deliberate Practice
(Reyhane Askari-Hemmat, Mohammad Pezeshki, Elvis Dohmatob, Florian Bordes, Pietro Astolfi, Melissa
Hall, Jakob Verbeek, Michal Drozdzal, Adriana Romero-Soriano; ICML 2025).

Spec: ../shared/papers/deliberate_practice.md. Page: docs/papers/deliberate_practice.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
