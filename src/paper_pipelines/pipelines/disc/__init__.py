"""disc: Socialized Coevolution: Advancing a Better World through Cross-Task Collaboration, with Dynamic
Information Socialized Collaboration (DISC).

Xinjie Yao, Yu Wang, Pengfei Zhu, Wanyu Lin, Ruipu Zhao, Zhoupeng Guo, Weihao Li, Qinghua Hu. ICML 2025
(PMLR v267). Official test-time code: github.com/yxjdarren/SC. Spec: ../shared/papers/disc.md.
Page: docs/papers/disc.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
