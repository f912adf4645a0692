"""Chapter 8's numbers for prose: the sample-size ratios of Eq. 2 and the size-robust bias
(:func:`ratio_summary`, :func:`ratio_findings`), the sign-flip tests over the grid, each distinct hypothesis
once and with its direction, and between configurations (:func:`grid_summary`, :func:`comparison_summary`), group
preference against stereotype (:func:`group_summary`), and the coverage simulation (:func:`simulation_findings`).

The studies themselves are the library's: :mod:`metricbias.bias.reliability`, :mod:`metricbias.bias.testing`,
:mod:`metricbias.bias.simulation`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ...bias.groups import CONTRAST
from ...metrics.base import PLM_PARADIGMS
from ...bias.simulation import PANELS

#: where the library offers each check of the chapter (the Reproducibility appendix shows it)
LIBRARY_CHECKS = (
    "The size-robust bias is the measure `size_robust_bias` (`mb.audit(..., measures=[\"size_robust_bias\"])`), its "
    "signed version `size_robust_difference`. `mb.measure`, `mb.bias_table` and `mb.audit` resample whole clusters "
    "(`metricbias.bias.clusters`; a `cluster` column names them) wherever some pairs share one. `mb.group_stereotype` "
    "separates the pronoun and stereotype effects; `mb.control_pairs` and `mb.noise_floor` give the control pairs and "
    "the noise floor; `mb.pairs_to_detect(gap, sd)` the pairs needed. `mb.audit(..., gap=G)` warns when an interval "
    "is wider than G, and `mb.audit(..., tests=True)` adds each row's p-value and Benjamini–Hochberg q-value. The "
    "studies are in `metricbias.bias.reliability`, `.testing`, `.simulation` and `.power`.")
#: the method's side notes (the Reproducibility appendix shows them)
METHOD_NOTES = (
    "A rank rescaling (percentile ranks) would be size-robust too, but it ignores how far apart two scores are; a "
    "standardized mean difference is blind to biases that cancel between pairs. Where Eq. 2 and the size-robust bias "
    "disagree, the ratio of the two is the metric's standard deviation over its range. The built CrowS-Pairs "
    "attributes with both directions (race, age, gender) separate the pronoun (group) and stereotype effects as the "
    "WinoBias pairs do; StereoSet pairs share their group and give the stereotype effect only. A two-sided p-value of "
    "a cell test is reported as a bound where no sign flip was as extreme.")


def ratio_summary(ratios: pd.DataFrame, *, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Per measure and n: the median over cells of the mean ratio, the median 5th / 95th percentiles, and the 95%
    interval of that median (``ci_low``, ``ci_high``) when whole metrics are resampled (a metric's cells on
    different attributes are not independent; :func:`metricbias.bias.clusters.median_interval`)."""
    from ...bias.clusters import median_interval

    out = ratios.groupby(["measure", "n"], sort=False)[["mean_ratio", "low", "high"]].median().reset_index()
    intervals = [median_interval(g["mean_ratio"], g["metric"], n_resamples=n_resamples, seed=seed)
                 for _, g in ratios.groupby(["measure", "n"], sort=False)]
    out["ci_low"], out["ci_high"] = [i[0] for i in intervals], [i[1] for i in intervals]
    return out.sort_values(["measure", "n"], kind="stable").reset_index(drop=True)


def ratio_findings(summary: pd.DataFrame, prefix_of=None) -> dict:
    """The numbers of :func:`ratio_summary` for prose: ``<measure>_<n>`` (median mean ratio), ``..._low``,
    ``..._high`` (median 5th / 95th percentiles), ``..._ci_low``, ``..._ci_high`` (the median's interval); measures
    abbreviated by ``prefix_of`` (default: eq2, srb)."""
    prefix_of = prefix_of or {"eq2": "eq2", "size_robust_bias": "srb"}
    out = {}
    for r in summary.itertuples(index=False):
        key = f"{prefix_of.get(r.measure, r.measure)}_{int(r.n)}"
        out.update({key: float(r.mean_ratio), f"{key}_low": float(r.low), f"{key}_high": float(r.high),
                    f"{key}_ci_low": float(getattr(r, "ci_low", np.nan)),
                    f"{key}_ci_high": float(getattr(r, "ci_high", np.nan))})
    return out


def grid_summary(tests: pd.DataFrame, identical: pd.DataFrame | None = None, *, q: float = 0.05,
                 n_resamples: int | None = None) -> dict:
    """The grid's cells, each distinct hypothesis once: of ``tests`` (:func:`metricbias.bias.testing.cell_tests`)
    the cells ``identical`` (:func:`metricbias.bias.scores.identical_cells`) does not name. Over those,
    Benjamini–Hochberg and Benjamini–Yekutieli (valid under any dependence) at ``q``, each count split by the
    sign of the stereotypical difference (``..._stereotypical``: candidate 1 scored higher; ``..._anti``: lower);
    with ``n_resamples``, the two-sided permutation floor 2 / (B + 1), the cells at it, and the Bonferroni
    threshold q / (distinct cells) and how many cells pass it."""
    tested = tests[tests["p_value"].notna()]
    keys = [c for c in ("dataset", "attribute", "metric") if c in tested.columns]
    if identical is not None and len(identical):
        dup = pd.MultiIndex.from_frame(identical[keys])
        distinct = tested[~pd.MultiIndex.from_frame(tested[keys]).isin(dup)]
    else:
        distinct = tested
    p = distinct["p_value"].to_numpy(float)
    up = distinct["stereotypical_difference"].to_numpy(float) > 0
    out = {"cells": len(tested), "duplicates": len(tested) - len(distinct), "distinct": len(distinct),
           "raw_significant": int((p < q).sum())}
    for name, method in (("bh", "bh"), ("by", "by")):
        sig = stats.false_discovery_control(p, method=method) < q if len(p) else np.zeros(0, dtype=bool)
        out.update({f"{name}_significant": int(sig.sum()), f"{name}_stereotypical": int((sig & up).sum()),
                    f"{name}_anti": int((sig & ~up).sum())})
    out["bh_share"] = out["bh_significant"] / max(len(distinct), 1)
    if n_resamples:
        floor = 2.0 / (n_resamples + 1)
        threshold = q / max(len(distinct), 1)
        out.update({"floor": floor, "at_floor": int((p <= floor * (1 + 1e-9)).sum()), "bonferroni": threshold,
                    "bonferroni_significant": int((p <= threshold).sum())})
    return out


def duplicate_list(identical: pd.DataFrame) -> str:
    """The cells counted once, for prose: "live chrf = released chrF (gender, race)" per distinct pairing."""
    if identical is None or identical.empty:
        return "none"
    grouped = identical.groupby(["dataset", "metric", "same_as_dataset", "same_as_metric"], sort=False)["attribute"]
    return "; ".join(f"{d} {m} = {sd} {sm} ({len(a)} attribute{'s' if len(a) > 1 else ''})"
                     for (d, m, sd, sm), a in grouped)


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
    for name, frame, interval in (("bca", independent, "BCa over pairs"), ("tl", templates, "two-level (conservative)"),
                                  ("tpo", templates, "templates only"), ("tpx", templates, "templates, expanded"),
                                  ("pair_tpl", templates, "BCa over pairs")):
        low, high, c = span(frame, interval)
        worst = c.loc[c["coverage"].idxmin()]
        out.update({f"{name}_min": low, f"{name}_max": high, f"{name}_worst_n": int(worst["n"]),
                    f"{name}_worst_measure": str(worst["measure"]).replace("_", " "),
                    f"{name}_in_target": int(c["coverage"].between(*target).sum()), f"{name}_cells": len(c),
                    f"{name}_reps": int(c["reps"].min())})
    for name, interval in (("tpo", "templates only"), ("tpx", "templates, expanded")):
        shown = templates[(templates["interval"] == interval) & templates["coverage"].notna()]
        for which, count in (("fewest", shown["templates"].min()),
                             ("few", shown.loc[shown["templates"] > shown["templates"].min(), "templates"].min())):
            at = shown[shown["templates"] == count]
            if at.empty:
                continue
            out.update({f"{name}_{which}_templates": int(count), f"{name}_at_{which}": float(at["coverage"].min()),
                        f"{name}_at_{which}_se": float(at.loc[at["coverage"].idxmin(), "mc_se"])})
    eq2 = independent[independent["measure"] == "eq2"].set_index("n")["relative_bias"]
    out.update({"eq2_bias_smallest": float(eq2.iloc[0]), "eq2_bias_largest": float(eq2.iloc[-1]),
                "n_smallest": int(eq2.index[0]), "n_largest": int(eq2.index[-1]),
                "type1_max": float(type_one["rejection_rate"].max()), "type1_min": float(type_one["rejection_rate"].min()),
                "type1_se": float(type_one["mc_se"].iloc[0])})
    return out


def robustness_findings(study: pd.DataFrame) -> dict:
    """Numbers for prose from :func:`metricbias.bias.simulation.robustness_study`: per design (``eq1``, ``eq2r``,
    ``tied``, ``heavy``), the lowest coverage over sizes and measures (``..._min``), its Monte-Carlo SE, size and measure,
    and the highest (``..._max``)."""
    short = {"Eq. 1-rescaled": "eq1", "Eq. 2": "eq2r", "tied scores": "tied", "heavy tails": "heavy"}
    out = {}
    for design, block in study.groupby("design", sort=False):
        key = short.get(design, str(design).replace(" ", "_"))
        worst = block.loc[block["coverage"].idxmin()]
        out.update({f"{key}_min": float(worst["coverage"]), f"{key}_min_se": float(worst["mc_se"]),
                    f"{key}_worst_n": int(worst["n"]), f"{key}_worst_measure": str(worst["measure"]).replace("_", " "),
                    f"{key}_max": float(block["coverage"].max())})
    return out


def median_findings(values, clusters, key: str, *, n_resamples: int = 9999, seed: int = 0) -> dict:
    """The median of ``values`` over cells (``key``) with its 95% interval when whole ``clusters`` are resampled
    (``key_ci_low``, ``key_ci_high``; a metric's cells on different attributes are not independent;
    :func:`metricbias.bias.clusters.median_interval`). NaN values are left out, as the median leaves them."""
    from ...bias.clusters import median_interval

    values, clusters = pd.Series(values, dtype=float).reset_index(drop=True), pd.Series(clusters).reset_index(drop=True)
    kept = values.notna().to_numpy()
    low, high = median_interval(values[kept], clusters[kept], n_resamples=n_resamples, seed=seed)
    return {key: float(values.median()), f"{key}_ci_low": low, f"{key}_ci_high": high}


def floor_findings(floor: pd.DataFrame, *, q: float = 0.05, margin: float = 1.0, n_resamples: int = 9999,
                   seed: int = 0) -> dict:
    """Numbers for prose from :func:`metricbias.bias.noise_floor.noise_floor`: the cells compared, how many have an
    Eq. 2 above their control's at a Benjamini–Hochberg false discovery rate ``q`` (``above``), below it
    (``below``), neither (``within``), how many are equivalent to their floor within ± ``margin`` points (the 95%
    interval of the excess inside it: ``equivalent``), and the median of Eq. 2 over its control (``ratio``) with
    its interval over whole metrics (``ratio_ci_low``, ``ratio_ci_high``; :func:`median_findings`)."""
    tested = floor[floor["p_value"].notna()]
    sig = stats.false_discovery_control(tested["p_value"].to_numpy(float), method="bh") < q if len(tested) else []
    up = tested["excess"].to_numpy(float) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (tested["eq2"] / tested["eq2_control"]).replace([np.inf, -np.inf], np.nan)
    inside = (tested["ci_low"] > -margin) & (tested["ci_high"] < margin)
    return {"cells": len(tested), "above": int((sig & up).sum()), "below": int((sig & ~up).sum()),
            "within": int(len(tested) - np.sum(sig)), "equivalent": int(inside.sum()), "margin": float(margin),
            **median_findings(ratio, tested["metric"] if "metric" in tested else range(len(tested)), "ratio",
                              n_resamples=n_resamples, seed=seed),
            "controls": int(floor["n_control"].max()) if len(floor) else 0}


def paradigm_floor_gap(excess: pd.DataFrame, paradigm_of: dict, *, first=PLM_PARADIGMS, second=("n-gram",),
                       value: str = "excess", n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Per attribute, the ``first`` paradigms' excess over the noise floor minus the ``second`` ones' (by default
    the PLM-based against the n-gram configurations), paired over templates: for each template the mean per-template
    excess (:func:`metricbias.bias.noise_floor.template_excess`) of the first group's configurations minus the second
    group's, averaged over the templates both groups score, with the expanded percentile interval over templates
    and the verdict of the claim that the first group's excess is the larger (:func:`~metricbias.bias.claims.
    claim_verdict`). ``value="attribute_d"`` makes the same comparison on the attribute pairs' |d| without the
    floor, so both gaps rest on the same configurations and templates. Columns ``attribute, templates, difference,
    ci_low, ci_high, verdict``."""
    from ...bias.claims import claim_verdict
    from ...bias.clusters import cluster_bootstrap

    group = excess["metric"].map(lambda m: "first" if paradigm_of.get(m) in first else
                                 "second" if paradigm_of.get(m) in second else None)
    rows = []
    for attribute, part in excess.assign(group=group).dropna(subset=["group"]).groupby("attribute", sort=False):
        means = part.pivot_table(index="template", columns="group", values=value, aggfunc="mean")
        values = (means.get("first") - means.get("second")).dropna() if {"first", "second"} <= set(means) else \
            pd.Series(dtype=float)
        low, high = cluster_bootstrap(values.to_numpy(), values.index.to_numpy(), n_resamples=n_resamples,
                                      seed=seed) if len(values) >= 2 else (np.nan, np.nan)
        rows.append({"attribute": attribute, "templates": len(values), "difference": float(values.mean()),
                     "ci_low": low, "ci_high": high, "verdict": claim_verdict(low, high)})
    return pd.DataFrame(rows, columns=["attribute", "templates", "difference", "ci_low", "ci_high", "verdict"])


def floor_gap_findings(gaps: pd.DataFrame, focus: str = "gender") -> dict:
    """Numbers for prose from :func:`paradigm_floor_gap`: on how many attributes the claim holds (``holds``),
    reverses (``reverses``) or is not distinguishable (``undecided``), of ``attributes``, and the ``focus``
    attribute's difference with its interval (``<focus>``, ``<focus>_ci_low``, ``<focus>_ci_high``) and verdict
    (``<focus>_verdict``)."""
    from ...bias.claims import UNDECIDED

    row = gaps.set_index("attribute").reindex([focus]).iloc[0]
    return {"holds": int((gaps["verdict"] == "holds").sum()), "reverses": int((gaps["verdict"] == "reverses").sum()),
            "undecided": int((gaps["verdict"] == UNDECIDED).sum()), "attributes": len(gaps),
            focus: float(row["difference"]), f"{focus}_ci_low": float(row["ci_low"]),
            f"{focus}_ci_high": float(row["ci_high"]), f"{focus}_verdict": str(row["verdict"])}


def group_summary(effects: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Group preference against stereotype from :func:`metricbias.bias.groups.group_stereotype` rows (with
    ``contrast=True``) and a ``scores`` column (released, live): per scores set, the configurations, how many have a
    group (pronoun) effect and a stereotype effect whose interval excludes 0 (the group effect split by its
    direction: the group coded +1 preferred, on WinoBias gender the male pronoun, or the group coded −1), how many
    have the group effect the larger in absolute value with the interval of |group| − |stereotype| above 0, and the
    median of |group| / (|group| + |stereotype|), the pronoun's share of the two. Also the findings for prose,
    ``<scores>_<column>``, with ``<scores>_stereotype_larger`` (that interval below 0) and ``<scores>_contrasts``
    (the configurations with a contrast)."""
    wide = effects.pivot_table(index=["scores", "metric"], columns="effect", values=["estimate", "ci_low", "ci_high"],
                               sort=False)
    rows, extra = [], {}
    for name, block in wide.groupby(level="scores", sort=False):
        g, st = block["estimate"]["group"].abs(), block["estimate"]["stereotype"].abs()
        shown = {e: (block["ci_low"][e] > 0) | (block["ci_high"][e] < 0) for e in ("group", "stereotype", CONTRAST)}
        signed = block["estimate"]["group"]
        rows.append({"scores": name, "configurations": len(block), "group effect shown": int(shown["group"].sum()),
                     "+1 group preferred": int((shown["group"] & (signed > 0)).sum()),
                     "−1 group preferred": int((shown["group"] & (signed < 0)).sum()),
                     "stereotype effect shown": int(shown["stereotype"].sum()),
                     "group larger": int((block["ci_low"][CONTRAST] > 0).sum()),
                     "pronoun share (median)": float((g / (g + st)).median())})
        prefix = name.split()[0]
        extra.update({f"{prefix}_stereotype_larger": int((block["ci_high"][CONTRAST] < 0).sum()),
                      f"{prefix}_contrasts": int(block["estimate"][CONTRAST].notna().sum())})
    table = pd.DataFrame(rows)
    keys = {"configurations": "configurations", "group effect shown": "group_shown",
            "+1 group preferred": "group_plus", "−1 group preferred": "group_minus",
            "stereotype effect shown": "stereotype_shown", "group larger": "group_larger",
            "pronoun share (median)": "pronoun_share"}
    findings = {f"{r['scores'].split()[0]}_{key}": r[column] for r in rows for column, key in keys.items()}
    return table, {**findings, **extra}


def pronoun_verdict(findings: dict) -> str:
    """The page's closing sentence on pronoun against stereotype, from :func:`group_summary`'s findings: which of the
    two effects is more often the larger (interval of |group| − |stereotype| excluding 0), per scores set."""
    def leans(prefix):
        pronoun, stereotype = findings[f"{prefix}_group_larger"], findings[f"{prefix}_stereotype_larger"]
        return "pronoun" if pronoun > stereotype else "stereotype" if stereotype > pronoun else None

    released, live = leans("released"), leans("live")
    if released == live == "pronoun":
        return "On both score sets the pronoun effect is more often the larger: much of the signed difference " \
               "between the two candidates is a preference for one pronoun, whatever the occupation (Eq. 2, which " \
               "takes its absolute value, cannot tell the two apart)."
    if released == live == "stereotype":
        return "On both score sets the stereotype effect is more often the larger: the signed difference between " \
               "the two candidates is mostly a preference for the stereotype, not for one pronoun."
    said = {"pronoun": "the pronoun effect is more often the larger", "stereotype": "the stereotype effect is more "
            "often the larger", None: "neither effect is more often the larger"}
    return f"On the released scores {said[released]}; on the live scores {said[live]}. Whether a pronoun or the " \
           "stereotype drives the signed gender difference depends on the configurations."


def candidate_correlation(scores: pd.DataFrame) -> float:
    """The median over (attribute, metric) cells of the correlation of the two candidates' scores: how much of
    the pooled SD (the size-robust bias's scale) is variation between pairs rather than within them."""
    r = [g["score_1"].corr(g["score_2"]) for _, g in scores.groupby(["attribute", "metric"], sort=False)]
    return float(np.nanmedian(r))


__all__ = ["LIBRARY_CHECKS", "METHOD_NOTES", "candidate_correlation", "comparison_summary", "duplicate_list", "floor_findings",
           "floor_gap_findings", "paradigm_floor_gap",
           "grid_summary", "group_summary", "median_findings", "ratio_findings", "ratio_summary",
           "robustness_findings", "simulation_findings"]
