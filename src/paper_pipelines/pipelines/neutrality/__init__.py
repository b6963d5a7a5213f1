"""Political neutrality approximations (Fisher et al., ICML 2025): output-level evaluation of LLMs."""

from paper_pipelines.pipelines.neutrality.pipeline import create_pipeline

__all__ = ["create_pipeline"]
