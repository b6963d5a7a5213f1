"""ATA: Adaptive Task Allocation for Efficient Resource Management in Distributed Machine Learning.

Artavazd Maranjyan, El Mehdi Saad, Peter Richtárik, Francesco Orabona. ICML 2025 (PMLR 267);
arXiv 2502.00775. See docs/papers/ata.md.
"""

from paper_pipelines.pipelines.ata.pipeline import create_pipeline

TITLE = "ATA: Adaptive Task Allocation for Efficient Resource Management in Distributed Machine Learning"
AUTHORS = ("Artavazd Maranjyan", "El Mehdi Saad", "Peter Richtárik", "Francesco Orabona")
VENUE = "ICML 2025"

__all__ = ["AUTHORS", "TITLE", "VENUE", "create_pipeline"]
