"""The house style of every figure lassi draws (reports, tools): colours, sizes, Agg pyplot."""

from __future__ import annotations

from pathlib import Path

OSS_COLOUR, MDS_COLOUR = "#1f77b4", "#d62728"
READ_COLOUR, WRITE_COLOUR = "#2ca02c", "#9467bd"
OTHER_COLOUR = "#b5b5b5"
DPI = 100
WIDTH = 12.5
# Every time-series figure has the same width and axes position, so the hours line up
# when the figures are stacked on the page; the right-hand strip holds legends and notes.
LEFT, RIGHT = 0.08, 0.73
LEGEND_X = 0.745


def pyplot():
    """matplotlib.pyplot on the Agg backend with the house rcParams (chosen at first draw)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10, "axes.titlesize": 12, "axes.titleweight": "bold",
                         "axes.grid": True, "grid.alpha": 0.3, "axes.axisbelow": True,
                         "legend.fontsize": 8.5, "legend.frameon": False})
    return plt


def save(fig, path: Path, tight: bool = False) -> Path:
    """Write `fig` as a PNG at `path` (folders made), close it, return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight" if tight else None, facecolor="white")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
