"""DLP: Dynamic Layerwise Pruning in Large Language Models.

Yuli Chen, Bo Cheng, Jiale Han, Yingying Zhang, Yingting Li, Shuhao Zhang. ICML 2025 (arXiv 2505.23807).
"""

from paper_pipelines.pipelines.dlp.pipeline import create_pipeline

__all__ = ["create_pipeline"]
