"""Numbers transcribed from the papers (``data/published/*.csv``) and side-by-side comparison.

The CSV files are facts copied from the papers' tables; nothing here computes
them. :func:`compare` joins a table we computed with the paper's, so that every
chapter can show *paper* and *this book* next to each other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .datasets.published import ATTRIBUTES
from .paths import published_dir

#: Table 9 of Sun et al. (metric, configuration) -> released score column
SUN_TABLE9_COLUMNS = {
    ("BLEU", "-"): "BLEU",
    ("ROUGE", "-"): "ROUGE",
    ("METEOR", "-"): "METEOR",
    ("NIST", "-"): "NIST",
    ("chrF", "-"): "chrF",
    ("BERTScore", "RoBERTa-large"): "BERTScore-RoBERTa-large",
    ("MoverScore", "DistilBERT"): "MoverScore-DistilBERT",
    ("BLEURT", "BERT-large"): "BLEURT-BERT-large",
    ("PRISM", "Fscore"): "PRISM-F",
    ("BARTScore", "BART-large Fscore"): "BARTScore-BART-large-F",
}


def table(name: str) -> pd.DataFrame:
    """A transcribed table by file stem, e.g. ``"sun2022_table6_bias"``."""
    path = published_dir() / f"{name}.csv"
    if not path.exists():
        known = sorted(p.stem for p in published_dir().glob("*.csv"))
        raise FileNotFoundError(f"no transcribed table {path}; known: {', '.join(known)}")
    return pd.read_csv(path)


def sun_table6() -> pd.DataFrame:
    """Table 6 of Sun et al. in long form: ``metric`` (released column), ``attribute``, ``paper``."""
    wide = table("sun2022_table6_bias")
    long = wide.melt(id_vars=["published_column", "metric", "backbone", "paradigm"], value_vars=list(ATTRIBUTES) + ["avg"],
                     var_name="attribute", value_name="paper")
    long = long.rename(columns={"metric": "family", "published_column": "metric"})
    return long[["metric", "family", "backbone", "paradigm", "attribute", "paper"]]


def sun_table9() -> pd.DataFrame:
    """Table 9 of Sun et al. (gender, absolute vs stereotypical difference) with the released column."""
    t9 = table("sun2022_table9_gender_absolute_vs_stereotypical")
    t9["published_column"] = [SUN_TABLE9_COLUMNS[(m, c)] for m, c in zip(t9["metric"], t9["configuration"])]
    return t9


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
