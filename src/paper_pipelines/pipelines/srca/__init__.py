"""SRCA: Spherical Rotation Component Analysis, as a Kedro pipeline.

Paper: Hengrui Luo, Jeremy E. Purvis, Didong Li, "Spherical Rotation Dimension Reduction with Geometric Loss
Functions", Journal of Machine Learning Research 25(175):1-55, 2024 (arXiv 2204.10975).
"""

from paper_pipelines.pipelines.srca.pipeline import create_pipeline

__all__ = ["create_pipeline"]
