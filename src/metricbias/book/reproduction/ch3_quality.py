"""Chapter 3: bias against quality: each configuration's bias beside how well it rates (WMT19 DARR,
STS-B), and the paradigm gap at matched quality.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...metaeval.quality import FLOOR_UNDECIDED
from ...metrics import metric_class
from ..training_data import QUALITY_REFERENCE
from .ch3_paradigms import paradigm_gaps
from .ch6_quality import both_or_each
from .names import joined


#: the configuration whose quality is the bar (the metric the trained parts' quality is set beside, by its label):
#: a finding from a configuration below it rests on a weak metric
REFERENCE_LABEL = metric_class(QUALITY_REFERENCE).label_for({})
#: the quality measures of :func:`metricbias.metaeval.quality.configuration_quality`, as the page names them
QUALITY_MEASURES = {"darr_tau": "WMT19 kk-en DARR Kendall-like τ", "stsb_r": "STS-B dev Pearson r"}


def quality_points(bias: pd.DataFrame, configs: pd.DataFrame, quality: pd.DataFrame,
                   reference: str = REFERENCE_LABEL, floors: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per live configuration: its paradigm, its bias averaged over the attributes (``avg_bias``), its
    quality (``darr_tau``, ``stsb_r`` and their item counts) and ``at_least_reference``: whether it is at least as
    good as ``reference`` on every quality measure. With ``floors`` (:func:`metricbias.metaeval.quality.
    paired_quality` against the reference) that is the paired test: no measure whose 95% interval of the difference
    lies below 0 (``floor`` gives the configuration's word: "below" on any measure, else "not distinguishable" on
    any, else "above"; a configuration without a paired row is not shown to be at least as good); without it,
    the point values."""
    avg = bias.groupby("metric", sort=False)["bias"].mean().rename("avg_bias")
    out = configs[["metric", "family", "paradigm"]].merge(avg, left_on="metric", right_index=True).merge(
        quality.drop(columns="signature", errors="ignore"), on="metric")
    if reference not in set(out["metric"]):
        raise ValueError(f"quality_points: the reference configuration {reference!r} has no bias or quality row")
    ref = out.set_index("metric").loc[reference]
    if floors is None:
        out["at_least_reference"] = np.logical_and.reduce([out[m] >= ref[m] for m in QUALITY_MEASURES])
        return out.reset_index(drop=True)
    words = floors.groupby("metric")["floor"].agg(
        lambda w: next((x for x in ("below", FLOOR_UNDECIDED, "not measured") if x in set(w)), "above"))
    out["floor"] = out["metric"].map(words).where(out["metric"] != reference, "reference")
    out["at_least_reference"] = out["floor"].isin(["above", FLOOR_UNDECIDED, "reference"])
    return out.reset_index(drop=True)


def reference_spec(entries=()):
    """The reference configuration (BLEU, :data:`REFERENCE_LABEL`) as a :class:`~metricbias.metrics.Spec`: the one
    in ``entries`` where there is one, else BLEU with its defaults."""
    from ...metrics.registry import Spec

    return next((Spec(*e) for e in entries if e.label == REFERENCE_LABEL), Spec(REFERENCE_LABEL, QUALITY_REFERENCE, {}))


def configuration_floors(entries, **options) -> pd.DataFrame:
    """Every configuration of ``entries`` against the reference on the same items, paired
    (:func:`metricbias.metaeval.quality.paired_quality`; ``options``: its sizes, seed, device and resamples): what
    :func:`quality_points` reads as ``floors``."""
    from ...metaeval.quality import paired_quality

    return paired_quality(list(entries), reference_spec(entries), **options)


def quality_table(points: pd.DataFrame, reference: str = REFERENCE_LABEL) -> pd.DataFrame:
    """:func:`quality_points` for the page: each configuration's quality beside the reference's (differences)."""
    ref = points.set_index("metric").loc[reference]
    return pd.DataFrame({
        "metric": points["metric"], "paradigm": points["paradigm"], "average bias": points["avg_bias"],
        "DARR τ": points["darr_tau"], f"DARR τ − {reference}": points["darr_tau"] - ref["darr_tau"],
        "STS-B r": points["stsb_r"], f"STS-B r − {reference}": points["stsb_r"] - ref["stsb_r"],
        f"at least {reference}": points["at_least_reference"]})


def bias_quality_correlations(points: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation of the average bias with each quality measure over the configurations, with its 95%
    interval (:func:`metricbias.bias.claims.spearman_interval`)."""
    from ...bias.claims import spearman_interval

    rows = []
    for column, label in QUALITY_MEASURES.items():
        rho = float(points["avg_bias"].corr(points[column], method="spearman"))
        low, high = spearman_interval(rho, len(points))
        rows.append({"measure": label, "configurations": len(points), "Spearman ρ": rho, "CI low": low,
                     "CI high": high})
    return pd.DataFrame(rows)


def gap_table(gaps: pd.DataFrame, labels: dict | None = None) -> pd.DataFrame:
    """:func:`matched_quality_gaps` for the page: which configurations (``labels`` renames the groups), the
    comparison, how many configurations on each side, the difference with its 95% interval ("+11.06 [+10.49,
    +11.60]"; "—" where it cannot be made) and the verdict."""
    def interval(r):
        if np.isnan(r["difference"]):
            return "—"
        return f"{r['difference']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]"

    return pd.DataFrame({"configurations": gaps["configurations"].replace(labels or {}),
                         "comparison": gaps["comparison"],
                         "PLM-based": gaps["PLM-based configurations"].astype(int),
                         "others": gaps["other configurations"].astype(int),
                         "difference [95% CI]": [interval(r) for r in gaps.to_dict("records")],
                         "verdict": gaps["verdict"]})


def correlation_findings(correlations: pd.DataFrame) -> dict:
    """Plain values of :func:`bias_quality_correlations` for the page: per measure (``darr``, ``stsb``) the
    Spearman ρ, its interval, the number of configurations and ``<measure>_verdict``: "rises with quality" or
    "falls as quality rises" when the interval excludes 0, else "is not distinguishable from no relation"; and
    ``verdicts``, both in one phrase (:func:`.ch6_quality.both_or_each`)."""
    keys = {column: key for column, key in zip(QUALITY_MEASURES, ("darr", "stsb"))}
    out = {}
    for r in correlations.to_dict("records"):
        key = keys[next(c for c, label in QUALITY_MEASURES.items() if label == r["measure"])]
        verdict = ("rises with quality" if r["CI low"] > 0 else "falls as quality rises" if r["CI high"] < 0
                   else "is not distinguishable from no relation")
        out.update({f"{key}_rho": r["Spearman ρ"], f"{key}_low": r["CI low"], f"{key}_high": r["CI high"],
                    f"{key}_configurations": r["configurations"], f"{key}_verdict": verdict})
    if "darr_verdict" in out and "stsb_verdict" in out:
        out["verdicts"] = both_or_each(out["darr_verdict"], out["stsb_verdict"], ("on the DARR τ", "on the STS-B r"),
                                       "on both measures")
    return out


def matched_quality_gaps(scores: pd.DataFrame, configs: pd.DataFrame, points: pd.DataFrame,
                         attribute: str = "gender", *, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """:func:`paradigm_gaps` twice: over every live configuration (``configurations = "all"``) and over those at
    least as good as the reference on every quality measure (``"at least " + reference``, quality matched)."""
    matched = set(points.loc[points["at_least_reference"], "metric"])
    every = paradigm_gaps(scores, configs, attribute, n_resamples=n_resamples, seed=seed).assign(configurations="all")
    subset = scores[scores["metric"].isin(matched)]
    kept = paradigm_gaps(subset, configs, attribute, n_resamples=n_resamples, seed=seed).assign(
        configurations=f"at least {REFERENCE_LABEL}")
    return pd.concat([every, kept], ignore_index=True)


#: the word for where the interval of a quality difference lies, as the page reads it
GAP_WORDS = {"above": "above 0", "below": "below 0", FLOOR_UNDECIDED: "not distinguishable from 0"}


def generation_quality_gaps(points: pd.DataFrame, entries, paradigm: str = "Generation",
                            others=("Matching", "Regression"), **options) -> pd.DataFrame:
    """Whether ``paradigm``'s configurations are weaker metrics than those of ``others``: per quality measure, its
    best configuration minus the weakest configuration of ``others`` on the same items, paired
    (:func:`metricbias.metaeval.quality.paired_quality`; ``options``: its sizes, seed, device and resamples). If the
    best is below the weakest, every configuration of the paradigm is below every other one. Columns: ``measure``
    (the page's name), ``key`` (``darr``, ``stsb``), ``best``, ``weakest``, ``difference``, ``ci_low``, ``ci_high``
    and ``word`` (:data:`GAP_WORDS`); no row for a measure without configurations on both sides."""
    from ...metaeval.quality import paired_quality
    from ...metrics.registry import Spec

    specs = {Spec(*e).label: Spec(*e) for e in entries}
    rows = []
    for column, key in zip(QUALITY_MEASURES, ("darr", "stsb")):
        mine = points[(points["paradigm"] == paradigm) & points[column].notna() & points["metric"].isin(specs)]
        rest = points[points["paradigm"].isin(others) & points[column].notna() & points["metric"].isin(specs)]
        if mine.empty or rest.empty:
            continue
        best = mine.loc[mine[column].idxmax(), "metric"]
        weakest = rest.loc[rest[column].idxmin(), "metric"]
        r = paired_quality([specs[best]], specs[weakest], measures=(column,), **options).iloc[0]
        rows.append({"measure": QUALITY_MEASURES[column], "key": key, "best": best, "weakest": weakest,
                     "difference": float(r["difference"]), "ci_low": float(r["ci_low"]),
                     "ci_high": float(r["ci_high"]), "word": GAP_WORDS.get(r["floor"], str(r["floor"]))})
    return pd.DataFrame(rows, columns=["measure", "key", "best", "weakest", "difference", "ci_low", "ci_high", "word"])


def generation_gap_findings(gaps: pd.DataFrame) -> dict:
    """Plain values of :func:`generation_quality_gaps` for the page (glued as ``ch3_genq_*``): per measure key
    the ``<key>_best`` and ``<key>_weakest`` configurations, ``<key>_difference``, ``<key>_low``, ``<key>_high``
    and ``<key>_word``; NaN and "not measured" for a measure without a row."""
    out = {}
    for key in ("darr", "stsb"):
        row = gaps[gaps["key"] == key]
        if row.empty:
            out.update({f"{key}_best": "", f"{key}_weakest": "", f"{key}_difference": float("nan"),
                        f"{key}_low": float("nan"), f"{key}_high": float("nan"), f"{key}_word": "not measured"})
            continue
        r = row.iloc[0]
        out.update({f"{key}_best": r["best"], f"{key}_weakest": r["weakest"], f"{key}_difference": r["difference"],
                    f"{key}_low": r["ci_low"], f"{key}_high": r["ci_high"], f"{key}_word": r["word"]})
    return out


def generation_weaker(findings: dict) -> bool:
    """Whether :func:`generation_gap_findings` shows the generation configurations weaker metrics: their best below
    the weakest other configuration ("below 0") on any measure."""
    return any(findings.get(f"{k}_word") == GAP_WORDS["below"] for k in ("darr", "stsb"))


#: the short names of the two quality measures in the verdict's sentence
SHORT_MEASURES = {"darr": "DARR τ", "stsb": "STS-B r"}


def weaker_on(findings: dict) -> str:
    """The quality measures on which :func:`generation_weaker` finds the generation configurations weaker ("below
    0"), joined for the verdict's sentence ("STS-B r"; "DARR τ and STS-B r"); "neither measure" when none."""
    below = [name for key, name in SHORT_MEASURES.items() if findings.get(f"{key}_word") == GAP_WORDS["below"]]
    return joined(below, empty="neither measure")


def generation_gap_reading(findings: dict) -> str:
    """What :func:`generation_gap_findings` means for the paradigm's share (glued as ``ch3_genq_reading``): a
    clause that says whether a quality effect can account for it, as the data decide: the generation
    configurations below the others on any measure ("below 0") confound the paradigm with quality."""
    if generation_weaker(findings):
        return ("so on this grid an effect of the paradigm cannot be told apart from an effect of the metric's "
                "quality")
    if all(findings.get(f"{k}_word") == "not measured" for k in ("darr", "stsb")):
        return "so the grid does not show whether the paradigm's share is an effect of quality"
    return "so a lower quality of the generation configurations does not account for the paradigm's share"
