"""vilamp: <paper title> (<authors>, <venue year>).

Spec: ../shared/papers/vilamp.md. Page: docs/papers/vilamp.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
