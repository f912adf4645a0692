"""Liu (2024), Table 2, side by side with the PLL measures on the masked-LM heads trained here.

Liu reports, per dataset and masked LM: the dataset's own measure (SSS on StereoSet,
CPS on CrowS-Pairs, as the percentage of pairs whose stereotypical sentence scores
higher), the same percentage with AUL, and KLS and JSS on the AUL scores (weighted over
bias types, Eqs. 10-11). :func:`table2` computes that row for any masked LM
:func:`metricbias.bias.pll.load_masked_lm` takes (offline: ``mlm-all-MiniLM-L6-v2`` and
``mlm-all-mpnet-base-v2``: heads trained on the frozen sentence encoders, not MLM-pretrained
models like Liu's BERT, RoBERTa and ALBERT); :func:`beside_published` stacks it under Liu's
printed rows.
"""

from __future__ import annotations

import pandas as pd

#: dataset -> (pll loader name, Liu's baseline method)
DATASETS = {"StereoSet": ("stereoset", "sss"), "CrowS-Pairs": ("crows_pairs", "cps")}
COLUMNS = ["source", "dataset", "model", "baseline_measure", "baseline_value", "aul", "kls", "jss", "n_pairs"]


def row(table: pd.DataFrame, baseline: str) -> dict:
    """Liu's Table 2 columns from a :func:`metricbias.bias.pll.bias_table` holding ``baseline`` and ``aul``."""
    overall = table[table["bias_type"] == "all"].set_index("method")
    return {"baseline_measure": baseline.upper(), "baseline_value": overall.loc[baseline, "indicator"],
            "aul": overall.loc["aul", "indicator"], "kls": overall.loc["aul", "kls"],
            "jss": overall.loc["aul", "jss"], "n_pairs": int(overall.loc["aul", "n_pairs"])}


def table2(models, *, sample_size: int = 0, seed: int = 0, device: str = "auto", progress: bool = True,
           datasets=tuple(DATASETS)) -> pd.DataFrame:
    """Our Table 2: one row per (dataset, masked LM); ``sample_size`` pairs per dataset (0: all)."""
    from ..bias import pll

    rows = []
    for name in models:
        lm = pll.load_masked_lm(name, device=device)
        for dataset in datasets:
            loader, baseline = DATASETS[dataset]
            pairs = getattr(pll, loader)()
            if sample_size:
                pairs = pairs.sample(n=min(sample_size, len(pairs)), random_state=seed)
            table = pll.bias_table(pll.score_pairs(lm, pairs, methods=(baseline, "aul"), progress=progress))
            rows.append({"source": "this book", "dataset": dataset, "model": name, **row(table, baseline)})
    return pd.DataFrame(rows, columns=COLUMNS)


def beside_published(ours: pd.DataFrame) -> pd.DataFrame:
    """Liu's printed Table 2 rows, then ours, in one frame (``source`` says whose)."""
    from .tables import table

    liu = table("liu2024_table2").assign(source="Liu (2024), Table 2", n_pairs=pd.NA)
    return pd.concat([liu[COLUMNS], ours[COLUMNS]], ignore_index=True)


__all__ = ["COLUMNS", "DATASETS", "beside_published", "row", "table2"]
