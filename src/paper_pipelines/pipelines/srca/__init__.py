"""SRCA: Spherical Rotation Component Analysis (Luo, Purvis, Li; JMLR 2024) as a Kedro pipeline."""

from paper_pipelines.pipelines.srca.pipeline import create_pipeline

__all__ = ["create_pipeline"]
