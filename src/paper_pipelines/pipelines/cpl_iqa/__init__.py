"""cpl_iqa: CPL-IQA, Confidence-Quantifiable Pseudo-Label Learning for semi-supervised blind image
quality assessment (Yan Zhong, Chenxi Yang, Suyuan Zhao, Tingting Jiang; ICML 2025, PMLR 267).

No official code; the method is reconstructed from the paper's abstract, its reviews and the label
propagation it builds on (Iscen et al., CVPR 2019). Spec: ../shared/papers/cpl_iqa.md.
Page: docs/papers/cpl_iqa.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
