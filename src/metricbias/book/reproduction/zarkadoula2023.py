"""Zarkadoula & Potamopoulou (2023), the replication of Sun et al. (2022): their mitigation table beside Sun et al.'s.

They re-trained Sun et al.'s debiasing adapters and report gender bias and WMT20
Pearson before and after (no REALSumm); :func:`published_tables` puts both tables
in one frame with the relative changes computed from the printed values, for
chapter 6 to show beside ours.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .tables import table


def published_tables() -> pd.DataFrame:
    """Table 5 of Sun et al. and the replication's table in one frame (``source`` says whose), relative changes added."""
    sun = table("sun2022_table4_5_mitigation")
    sun = sun[sun["table"] == 5].drop(columns="table").assign(source="Sun et al., Table 5")
    rep = table("zarkadoula2023_replication_mitigation").assign(
        source="Zarkadoula & Potamopoulou, replication", realsumm_spearman=np.nan)
    both = pd.concat([sun, rep], ignore_index=True)
    base = both[both["variant"] == "original"].set_index(["source", "metric", "backbone"])
    for col in ("gender_bias", "wmt20_pearson_avg", "realsumm_spearman"):
        orig = [base.loc[(s, m, b), col] for s, m, b in zip(both["source"], both["metric"], both["backbone"])]
        both[f"{col}_change"] = (both[col] - orig) / np.abs(orig)
    return both[["source", "metric", "backbone", "variant", "gender_bias", "gender_bias_change", "wmt20_pearson_avg",
                 "wmt20_pearson_avg_change", "realsumm_spearman", "realsumm_spearman_change"]]


def for_page(published: pd.DataFrame) -> pd.DataFrame:
    """:func:`published_tables` with the book's column names: the printed numbers in ``(paper)`` columns, the
    relative changes (computed here from them) beside each."""
    return published.rename(columns={
        "gender_bias": "gender bias (paper)", "gender_bias_change": "gender bias change",
        "wmt20_pearson_avg": "WMT20 Pearson (paper)", "wmt20_pearson_avg_change": "WMT20 change",
        "realsumm_spearman": "REALSumm Spearman (paper)", "realsumm_spearman_change": "REALSumm change"})


def bartscore_changes(published: pd.DataFrame) -> list[float]:
    """The replication's relative changes of BARTScore's gender bias with an adapter, computed from its printed
    values (it prints them as "+0.08%" and "+0.18%": fractions shown as percentages)."""
    rows = published[published["source"].str.startswith("Zarkadoula") & (published["metric"] == "BARTScore")
                     & (published["variant"] != "original")]
    return [float(v) for v in rows["gender_bias_change"]]
