"""TCA (You, Lu & Huang, ICML 2025): test-time correlation alignment, LinearTCA and LinearTCA+."""

from paper_pipelines.pipelines.tca.pipeline import create_pipeline

__all__ = ["create_pipeline"]
