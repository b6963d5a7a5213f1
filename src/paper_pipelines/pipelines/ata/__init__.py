"""ATA: Adaptive Task Allocation (Maranjyan, Saad, Richtarik, Orabona, ICML 2025)."""

from paper_pipelines.pipelines.ata.pipeline import create_pipeline

__all__ = ["create_pipeline"]
