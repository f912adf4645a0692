"""Chapter 8's numbers for prose: the sample-size ratios of Eq. 2 and the size-robust bias
(:func:`ratio_summary`, :func:`ratio_findings`), the sign-flip tests over the grid and between configurations
(:func:`grid_summary`, :func:`comparison_summary`), and the coverage simulation (:func:`simulation_findings`).

The studies themselves are the library's: :mod:`metricbias.bias.reliability`, :mod:`metricbias.bias.testing`,
:mod:`metricbias.bias.simulation`.
"""

from __future__ import annotations

import pandas as pd

from ...bias.simulation import PANELS


def ratio_summary(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per measure and n: the median over cells of the mean ratio, and the median 5th / 95th percentiles."""
    out = ratios.groupby(["measure", "n"], sort=False)[["mean_ratio", "low", "high"]].median().reset_index()
    return out.sort_values(["measure", "n"], kind="stable").reset_index(drop=True)


def ratio_findings(summary: pd.DataFrame, prefix_of=None) -> dict:
    """The numbers of :func:`ratio_summary` for prose: ``<measure>_<n>`` (median mean ratio), ``..._low``,
    ``..._high``; measures abbreviated by ``prefix_of`` (default: eq2, srb)."""
    prefix_of = prefix_of or {"eq2": "eq2", "size_robust_bias": "srb"}
    out = {}
    for r in summary.itertuples(index=False):
        key = f"{prefix_of.get(r.measure, r.measure)}_{int(r.n)}"
        out.update({key: float(r.mean_ratio), f"{key}_low": float(r.low), f"{key}_high": float(r.high)})
    return out


def grid_summary(tests: pd.DataFrame, *, q: float = 0.05) -> dict:
    """How many cells are significant before and after Benjamini–Hochberg at ``q``."""
    ok = tests["p_value"].notna()
    return {"cells": int(ok.sum()), "raw_significant": int((tests["p_value"] < q).sum()),
            "bh_significant": int((tests["q_value"] < q).sum()),
            "bh_share": float((tests["q_value"] < q).sum() / max(int(ok.sum()), 1))}


def comparison_summary(diffs: pd.DataFrame, *, q: float = 0.05) -> dict:
    """How many configuration comparisons are significant after BH at ``q``, overall and per attribute."""
    sig = diffs["q_value"] < q
    by = diffs.assign(sig=sig).groupby("attribute", sort=False)["sig"].agg(["sum", "size"])
    return {"comparisons": len(diffs), "significant": int(sig.sum()),
            "share": float(sig.mean()) if len(diffs) else float("nan"),
            "by_attribute": ", ".join(f"{str(a).replace('_', ' ')} {int(r['sum'])}/{int(r['size'])}"
                                      for a, r in by.iterrows())}


def simulation_findings(study: pd.DataFrame, type_one: pd.DataFrame, target=(0.93, 0.97)) -> dict:
    """Numbers for prose from :func:`metricbias.bias.simulation.coverage_study` and
    :func:`~metricbias.bias.simulation.type_one_study`."""
    independent, templates = (study[study["panel"] == p] for p in PANELS)
    def span(frame, interval):
        c = frame[(frame["interval"] == interval) & frame["coverage"].notna()]
        return float(c["coverage"].min()), float(c["coverage"].max()), c

    out = {}
    for name, frame, interval in (("bca", independent, "BCa over pairs"), ("tl", templates, "two-level"),
                                  ("tpo", templates, "templates only"),
                                  ("pair_tpl", templates, "BCa over pairs")):
        low, high, c = span(frame, interval)
        worst = c.loc[c["coverage"].idxmin()]
        out.update({f"{name}_min": low, f"{name}_max": high, f"{name}_worst_n": int(worst["n"]),
                    f"{name}_worst_measure": str(worst["measure"]).replace("_", " "),
                    f"{name}_in_target": int(c["coverage"].between(*target).sum()), f"{name}_cells": len(c),
                    f"{name}_reps": int(c["reps"].min())})
    eq2 = independent[independent["measure"] == "eq2"].set_index("n")["relative_bias"]
    out.update({"eq2_bias_smallest": float(eq2.iloc[0]), "eq2_bias_largest": float(eq2.iloc[-1]),
                "n_smallest": int(eq2.index[0]), "n_largest": int(eq2.index[-1]),
                "type1_max": float(type_one["rejection_rate"].max()), "type1_min": float(type_one["rejection_rate"].min()),
                "type1_se": float(type_one["mc_se"].iloc[0])})
    return out


__all__ = ["comparison_summary", "grid_summary", "ratio_findings", "ratio_summary", "simulation_findings"]
