"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure


def error_by_method(results: pd.DataFrame) -> Figure:
    """Test error of the method and each baseline."""
    fig, ax = new_figure(figsize=(5, 3.2))
    ax.bar(
        results["method"],
        results["error"],
        color=[method_colour(m) for m in results["method"]],
    )
    ax.set(ylabel=f"test {results['metric'].iloc[0]}", title="{{ cookiecutter.pipeline_name }}")
    return fig
