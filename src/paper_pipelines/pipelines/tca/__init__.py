"""tca: Test-Time Correlation Alignment (Linjing You, Jiabao Lu, Xiayuan Huang; ICML 2025).

LinearTCA and LinearTCA+ on Digits-C (default and fast scale) or CIFAR-10-C with a ResNet (paper scale).
Spec: ../shared/papers/tca.md. Page: docs/papers/tca.md.
"""

from paper_pipelines.pipelines.tca.pipeline import create_pipeline

__all__ = ["create_pipeline"]
