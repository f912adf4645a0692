"""Numbers transcribed from the papers (``data/published/*.csv``) and side-by-side comparison.

The CSV files are facts copied from the papers' tables; nothing here computes
them. :func:`compare` joins a table we computed with the paper's, so that every
chapter can show *paper* and *this book* next to each other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...paths import published_dir

def table(name: str) -> pd.DataFrame:
    """A transcribed table by file stem, e.g. ``"sun2022_table6_bias"``."""
    path = published_dir() / f"{name}.csv"
    if not path.exists():
        known = sorted(p.stem for p in published_dir().glob("*.csv"))
        raise FileNotFoundError(f"no transcribed table {path}; known: {', '.join(known)}")
    return pd.read_csv(path)


def with_average(bias: pd.DataFrame, value: str = "bias") -> pd.DataFrame:
    """Append, per metric, the unweighted mean over attributes as attribute ``avg`` (as the paper's Avg. column)."""
    avg = bias.groupby("metric", sort=False)[value].mean().reset_index().assign(attribute="avg")
    return pd.concat([bias[["metric", "attribute", value]], avg], ignore_index=True)


def compare(ours: pd.DataFrame, paper: pd.DataFrame, *, on=("metric", "attribute"), ours_col: str = "bias",
            paper_col: str = "paper", tolerance: float = 0.01) -> pd.DataFrame:
    """Join our values with the paper's; ``agrees`` is |ours - paper| <= tolerance."""
    on = list(on)
    merged = paper.merge(ours[on + [ours_col]].rename(columns={ours_col: "ours"}), on=on, how="left")
    merged = merged.rename(columns={paper_col: "paper"})
    merged["difference"] = merged["ours"] - merged["paper"]
    # the paper prints two decimals; the small slack absorbs float noise at the boundary
    merged["agrees"] = np.abs(merged["difference"]) <= tolerance + 1e-9
    return merged
