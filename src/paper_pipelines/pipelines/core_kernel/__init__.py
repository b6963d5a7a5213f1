"""core_kernel: COKE, Core Kernel for More Efficient Approximation of Kernel Weights in Multiple Kernel
Clustering (Weixuan Liang, Xinwang Liu, Ke Liang, Jiyuan Liu, En Zhu; ICML 2025, PMLR 267).

Spec: ../shared/papers/core_kernel.md. Page: docs/papers/core_kernel.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
