"""Political Neutrality in AI Is Impossible — But Here Is How to Approximate It.

Jillian Fisher, Ruth Elisabeth Appel, Chan Young Park, Yujin Potter, Liwei Jiang, Taylor Sorensen, Shangbin Feng,
Yulia Tsvetkov, Margaret Roberts, Jennifer Pan, Dawn Song, Yejin Choi. ICML 2025 (position paper track).
Here: the output-level evaluation of Sec. 5 (prompts -> responses -> judge annotations -> technique
distributions), with scripted baselines and two system-level metrics as an extension.
"""

from paper_pipelines.pipelines.neutrality.pipeline import create_pipeline

__all__ = ["create_pipeline"]
