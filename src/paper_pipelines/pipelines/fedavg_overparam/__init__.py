"""fedavg_overparam: Convergence Analysis of Overparameterized FedAvg with Gradient Descent (and Same
Generalisation as Centralised Learning in the Infinite-Width Limit) (Like Jian, Dong Liu; ICML 2025,
PMLR 267; arXiv 2508.12576).

Spec: ../shared/papers/fedavg_overparam.md. Page: docs/papers/fedavg_overparam.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
