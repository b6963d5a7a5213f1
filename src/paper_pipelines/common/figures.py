"""Figure helpers: matplotlib's object API (no pyplot, no ``matplotlib.use``) and one colour per method.

A ``Figure`` built here renders headless when ``matplotlib.MatplotlibDataset`` saves it, so nodes never
touch global matplotlib state. A method keeps its colour in every paper's figures.
"""

from __future__ import annotations

import zlib

from matplotlib.axes import Axes
from matplotlib.figure import Figure

# Colour-blind-safe palette (Okabe-Ito, then tab10's remainder); a name maps to the same colour everywhere.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
    "#8c564b", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
# The paper's own method is always blue, the plainest baseline grey-black.
FIXED = {"method": PALETTE[0], "ours": PALETTE[0], "uniform": PALETTE[7], "dense": "#7f7f7f"}


def method_colour(name: str, ours: str | None = None) -> str:
    """The colour of a method, stable across runs and papers (CRC32 of its lower-cased name).

    ``ours`` names the paper's own method, which is always drawn in the first (blue) colour.
    """
    key = name.lower()
    if ours is not None and key == ours.lower():
        return PALETTE[0]
    return FIXED.get(key) or PALETTE[zlib.crc32(key.encode()) % len(PALETTE)]


def distinct_colours(names, ours: str | None = None) -> list[str]:
    """One colour per name for a figure that shows them side by side: each keeps its
    :func:`method_colour` unless an earlier name already took it, then takes the next free palette
    entry (in palette order), so no two bars or lines of one figure share a colour while the palette
    lasts. Repeated names keep one colour."""
    taken: dict[str, str] = {}
    used: set[str] = set()
    out = []
    for name in names:
        key = str(name).lower()
        if key not in taken:
            colour = method_colour(str(name), ours)
            if colour in used:
                start = PALETTE.index(colour) if colour in PALETTE else 0
                free = [PALETTE[(start + i) % len(PALETTE)] for i in range(1, len(PALETTE))]
                colour = next((c for c in free if c not in used), colour)
            taken[key] = colour
            used.add(colour)
        out.append(taken[key])
    return out


def new_figure(
    nrows: int = 1,
    ncols: int = 1,
    figsize: tuple[float, float] = (7.0, 3.8),
    subplot_kw: dict | None = None,
) -> tuple[Figure, Axes | list]:
    """A Figure with its axes (one Axes, or an array for a grid), laid out tightly when saved.

    ``subplot_kw`` goes to ``Figure.subplots`` (e.g. ``{"projection": "3d"}``).
    """
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=True, subplot_kw=subplot_kw)
    return fig, axes
