"""nego: NeGo, Enhancing Graph Invariant Learning from a Negative Inference Perspective (Kuo Yang,
Zhengyang Zhou, Qihe Huang, Wenjie Du, Limin Li, Wu Jiang, Yang Wang; ICML 2025, PMLR 267).

No official code and no readable full text: the method is NeGo-R, the spec's reconstruction.
Spec: ../shared/papers/nego.md. Page: docs/papers/nego.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
