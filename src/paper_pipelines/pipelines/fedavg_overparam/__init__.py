"""fedavg_overparam: Widening the Network Mitigates the Impact of Data Heterogeneity on FedAvg (Like Jian,
Dong Liu; ICML 2025, PMLR 267:27399-27425; arXiv 2508.12576).

Spec: ../shared/papers/fedavg_overparam.md. Page: docs/papers/fedavg_overparam.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
