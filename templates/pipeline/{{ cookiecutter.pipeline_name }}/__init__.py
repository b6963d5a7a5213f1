"""{{ cookiecutter.pipeline_name }}: <paper title> (<authors>, <venue year>).

Spec: ../shared/papers/{{ cookiecutter.pipeline_name }}.md. Page: docs/papers/{{ cookiecutter.pipeline_name }}.md.
"""

from .pipeline import create_pipeline

__all__ = ["create_pipeline"]
