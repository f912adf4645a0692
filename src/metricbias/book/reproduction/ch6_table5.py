"""Chapter 6: our Table 5 (debiasing adapters) in the shape of Sun et al.'s, and the range of their
adapters' gender bias cuts.
"""

from __future__ import annotations

import pandas as pd


#: the bias row of Table 5 in each bias dataset
GENDER = {"published": "gender", "built": "gender"}
#: the page's headers for :func:`table5`'s columns: words, with each quality set's statistic
PAGE_COLUMNS = {"gender bias (published)": "gender bias (released)", "wmt19-kk-en": "WMT19 kk-en τ",
                "realsumm": "REALSumm ρ", "flickr8k": "Flickr8k τ", "stsb-dev": "STS-B dev r"}


def table5(results: pd.DataFrame) -> pd.DataFrame:
    """Our Table 5: per metric, the original and ``+ adapter`` rows of gender bias and quality.

    ``results`` is a long before/after table with ``metric`` and ``backbone`` columns
    (:func:`metricbias.book.reproduction.ch6_adapters.compare_all`). Each adapter row's cells read
    ``value (relative change)``.
    """
    rows = []
    for (label, backbone), table in results.groupby(["metric", "backbone"], sort=False):
        keyed = {}
        for r in table.to_dict("records"):
            if r["kind"] == "bias" and r["name"] == GENDER.get(r["dataset"]):
                keyed[f"gender bias ({r['dataset']})"] = r
            elif r["kind"] == "quality":
                keyed[r["dataset"]] = r
        for variant in ("original", "+ adapter"):
            row = {"metric": label, "backbone": backbone, "variant": variant}
            for col, r in keyed.items():
                if variant == "original":
                    row[col] = f"{r['before']:.3f}" if r["kind"] == "quality" else f"{r['before']:.2f}"
                else:
                    v = f"{r['after']:.3f}" if r["kind"] == "quality" else f"{r['after']:.2f}"
                    row[col] = f"{v} ({r['relative_change']:+.1%})"
            rows.append(row)
    return pd.DataFrame(rows)


def table5_paper_cuts(published: pd.DataFrame) -> dict:
    """The smallest and largest gender bias cut of Sun et al.'s adapters (Table 5; ``published`` is
    :func:`metricbias.book.reproduction.zarkadoula2023.published_tables`)."""
    cut = -published.loc[published["source"].str.startswith("Sun") & (published["variant"] != "original"),
                         "gender_bias_change"]
    return {"paper_cut_min": float(cut.min()), "paper_cut_max": float(cut.max())}
