"""DLP: Dynamic Layerwise Pruning in Large Language Models (Chen et al., ICML 2025)."""

from paper_pipelines.pipelines.dlp.pipeline import create_pipeline

__all__ = ["create_pipeline"]
