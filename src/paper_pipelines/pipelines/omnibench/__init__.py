"""omnibench: What Limits Virtual Agent Application? OmniBench: A Scalable Multi-Dimensional Benchmark
for Essential Virtual Agent Capabilities (Bu, Wu, Yu, Gao, Miao, Zhang, Pan, Li, Li, Ji, Li, Tang,
Zhuang, ICML 2025).

Spec: ../shared/papers/omnibench.md. Page: docs/papers/omnibench.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
