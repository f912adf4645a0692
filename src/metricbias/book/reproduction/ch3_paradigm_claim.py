"""Chapter 3: paradigm against backbone (Sun et al., Figure 4), with the backbone held fixed.

Sun et al. (2022, Sec. 2.3) compare the *paradigm* of a PLM-based metric (matching,
regression, generation), which decides how much extrinsic bias it adds, with the
*backbone* (which PLM, how large), which decides its intrinsic bias. A configuration
here is one row: ``metric`` (a released column or a live label), ``family`` (BERTScore,
MoverScore, BLEURT, ...), ``paradigm``, ``backbone`` and ``params_m`` (millions of
parameters). Released configurations come from the transcribed Table 6 (which files
FrugalScore under *Generation*); live ones from a metric suite.

The summary statistic of the comparison is :func:`metricbias.bias.decomposition.variance_explained`.

Their paradigms run on different backbones (BERT for matching and regression, BART and
PRISM's Transformer for generation), so paradigm and backbone are confounded.
:func:`paradigm_claim` puts two readings of "the paradigm has a greater impact on fairness
than the PLM" side by side:

* **released**: the share of the variance of Table 6's average bias (PLM-based metrics)
  explained by grouping the configurations by paradigm, and by backbone (eta squared);
  the groupings overlap, so the two shares need not add up to one;
* **backbone fixed**: the two-way decomposition of :func:`metricbias.bias.decomposition.decompose`
  on the 2 x 3 grid of :mod:`metricbias.metrics.backbone_grid`, where every paradigm runs on
  the same frozen encoder weights; the shares add up to one with the interaction.

The claim *holds* for a row when the paradigm's share exceeds the backbone's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...bias.claims import NOT_COMPARABLE
from ...metrics import PLM_PARADIGMS
from .names import joined, of_all
from .sun2022 import released_configs
from .tables import table


CLAIM_COLUMNS = ["source", "attribute", "share_paradigm", "share_paradigm_ci_low", "share_paradigm_ci_high",
                 "share_backbone", "share_backbone_ci_low", "share_backbone_ci_high", "share_difference",
                 "share_difference_ci_low", "share_difference_ci_high", "share_interaction", "p_paradigm_larger",
                 "claim_holds", "verdict", "n_configurations"]
RELEASED = "Sun et al., Table 6 (released scores; backbones differ by paradigm)"
FIXED = "this book (live scores; the same frozen backbone in every paradigm)"


def released_shares() -> dict:
    """Eta squared of Table 6's average bias by paradigm, by backbone and by metric family, over the same set: every
    PLM-based configuration of Table 6 (P, R and F of the generation metrics each count)."""
    from ...bias.decomposition import variance_explained

    t6 = table("sun2022_table6_bias").set_index("published_column")
    configs = released_configs()
    plm = configs[configs["paradigm"].isin(PLM_PARADIGMS)].copy()
    plm["avg"] = plm["metric"].map(t6["avg"])
    return {"share_paradigm": variance_explained(plm["avg"], plm["paradigm"]),
            "share_backbone": variance_explained(plm["avg"], plm["backbone"]),
            "share_family": variance_explained(plm["avg"], plm["family"]), "n_configurations": len(plm)}


def released_share_difference(*, n_resamples: int = 9999, seed: int = 0) -> dict:
    """The released reading's paradigm share minus its backbone share (eta squared over the configurations of
    :func:`released_shares`), with the 95% percentile bootstrap interval that resamples the configurations
    (:func:`scipy.stats.bootstrap`): ``difference``, ``low``, ``high`` (shares, 0 to 1), the same in percentage
    points (``points``, ``points_low``, ``points_high``: a difference of two shares is no share) and ``word`` ("above
    0", "below 0" or "not distinguishable from 0")."""
    from scipy import stats

    from ...bias.decomposition import variance_explained

    t6 = table("sun2022_table6_bias").set_index("published_column")
    configs = released_configs()
    plm = configs[configs["paradigm"].isin(PLM_PARADIGMS)].reset_index(drop=True)
    values = plm["metric"].map(t6["avg"]).to_numpy(float)

    def difference(rows):
        rows = np.asarray(rows, int)
        return (variance_explained(values[rows], plm["paradigm"].to_numpy()[rows])
                - variance_explained(values[rows], plm["backbone"].to_numpy()[rows]))

    point = difference(np.arange(len(plm)))
    ci = stats.bootstrap((np.arange(len(plm)),), difference, vectorized=False, n_resamples=n_resamples,
                         method="percentile", random_state=np.random.default_rng(seed)).confidence_interval
    low, high = float(ci.low), float(ci.high)
    word = "above 0" if low > 0 else "below 0" if high < 0 else "not distinguishable from 0"
    return {"difference": float(point), "low": low, "high": high, "points": 100 * float(point),
            "points_low": 100 * low, "points_high": 100 * high, "word": word}


def claim_verdict(difference_low: float, difference_high: float) -> str:
    """The verdict on "the paradigm matters more than the backbone" from the 95% percentile interval of the paradigm's
    share minus the backbone's over the bootstrap resamples (:func:`metricbias.bias.claims.claim_verdict`): "holds"
    above 0, "reverses" below, not distinguishable across it, "not comparable" without an interval (no
    decomposition)."""
    from ...bias.claims import claim_verdict as verdict

    return verdict(difference_low, difference_high)


def _verdict(row) -> str:
    """:func:`claim_verdict` of one row of :func:`metricbias.bias.decomposition.decompose`."""
    return claim_verdict(row.get("difference_ci_low", np.nan), row.get("difference_ci_high", np.nan))


def paradigm_claim(decomposition: pd.DataFrame, n_configurations: int | None = None) -> pd.DataFrame:
    """Sun et al.'s released reading and our fixed-backbone decomposition, one row per attribute (and average)."""
    rel = released_shares()
    rows = [{"source": RELEASED, "attribute": "average", **rel,
             "claim_holds": rel["share_paradigm"] > rel["share_backbone"], "verdict": NOT_COMPARABLE}]
    for r in decomposition.to_dict("records"):
        rows.append({"source": FIXED, "attribute": r["attribute"], "share_paradigm": r["share_paradigm"],
                     "share_paradigm_ci_low": r.get("share_paradigm_ci_low", np.nan),
                     "share_paradigm_ci_high": r.get("share_paradigm_ci_high", np.nan),
                     "share_backbone": r["share_backbone"],
                     "share_backbone_ci_low": r.get("share_backbone_ci_low", np.nan),
                     "share_backbone_ci_high": r.get("share_backbone_ci_high", np.nan),
                     "share_difference": r.get("difference", np.nan),
                     "share_difference_ci_low": r.get("difference_ci_low", np.nan),
                     "share_difference_ci_high": r.get("difference_ci_high", np.nan),
                     "share_interaction": r["share_interaction"], "p_paradigm_larger": r["p_first_larger"],
                     "claim_holds": _verdict(r) == "holds", "verdict": _verdict(r),
                     "n_configurations": n_configurations})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def size_robust_average(decomposition: pd.DataFrame) -> dict:
    """The fixed-backbone reading on the size-robust bias averaged over the attributes (a decomposition with
    ``measure="size_robust_bias"``), whose average does not weigh the small attributes up: ``paradigm``,
    ``paradigm_low``, ``paradigm_high``, ``backbone``, ``backbone_low``, ``backbone_high`` and ``verdict``
    (:func:`claim_verdict`); NaN and "not comparable" without a decomposition."""
    from ...bias.decomposition import AVERAGE

    keys = {"paradigm": "share_paradigm", "paradigm_low": "share_paradigm_ci_low",
            "paradigm_high": "share_paradigm_ci_high", "backbone": "share_backbone",
            "backbone_low": "share_backbone_ci_low", "backbone_high": "share_backbone_ci_high"}
    average = decomposition[decomposition["attribute"] == AVERAGE]
    if average.empty:
        return {**{k: float("nan") for k in keys}, "verdict": "not comparable"}
    row = average.iloc[0]
    return {**{k: float(row.get(c, np.nan)) for k, c in keys.items()}, "verdict": _verdict(row)}


#: the claim's verdict over the grid when it rests on a paradigm of weaker metrics and reads otherwise without it
CONFOUNDED = "confounded with quality"


def overall_verdict(three: str, two: str, weaker: bool) -> str:
    """The verdict on the claim over the fixed-backbone grid: the verdict on every paradigm the rule keeps
    (``three``), unless the paradigm that carries the share is made of weaker metrics (``weaker``,
    :func:`~metricbias.book.reproduction.ch3_quality.generation_weaker`) and the verdict without it (``two``)
    differs: then the grid cannot tell the paradigm from the metric's quality (:data:`CONFOUNDED`)."""
    return CONFOUNDED if weaker and two != three else three


#: the word for where the interval of a main effect's gap lies
GAP_WORDS = {"holds": "above 0", "reverses": "below 0"}


def effect_gaps(decomposition: pd.DataFrame) -> dict:
    """The main effects of the average bias as differences with their 95% intervals, from the resamples of
    :func:`metricbias.bias.decomposition.decompose` (glued as ``ch3_fixed_gap_*``): per factor (``paradigm``,
    ``backbone``) the most biased level (``<f>_top``), the least (``<f>_bottom``), the gap in points (``<f>``) with
    ``<f>_low``, ``<f>_high`` and ``<f>_word`` ("above 0", or not distinguishable from 0 at this size); NaN and
    "not comparable" without a decomposition."""
    from ...bias.claims import UNDECIDED, claim_verdict as verdict
    from ...bias.decomposition import AVERAGE

    average = decomposition[decomposition["attribute"] == AVERAGE]
    out = {}
    for f in ("paradigm", "backbone"):
        if average.empty or f"gap_{f}" not in average:
            out.update({f: float("nan"), f"{f}_low": float("nan"), f"{f}_high": float("nan"), f"{f}_top": "",
                        f"{f}_bottom": "", f"{f}_word": NOT_COMPARABLE})
            continue
        row = average.iloc[0]
        low, high = float(row.get(f"gap_{f}_ci_low", np.nan)), float(row.get(f"gap_{f}_ci_high", np.nan))
        word = verdict(low, high)
        out.update({f: float(row[f"gap_{f}"]), f"{f}_low": low, f"{f}_high": high,
                    f"{f}_top": str(row[f"top_{f}"]).lower() if f == "paradigm" else str(row[f"top_{f}"]),
                    f"{f}_bottom": str(row[f"bottom_{f}"]).lower() if f == "paradigm" else str(row[f"bottom_{f}"]),
                    f"{f}_word": GAP_WORDS.get(word, word if word == NOT_COMPARABLE else
                                               UNDECIDED.replace("distinguishable", "distinguishable from 0"))})
    return out


def _fix(reason: str) -> str:
    """The command an unavailable configuration's error names (the last `...` in it), without the machine's paths."""
    import re

    commands = re.findall(r"`([^`]+)`", reason)
    return commands[-1] if commands else ""


def grid_availability(encoders=None) -> pd.DataFrame:
    """The configurations of the fixed-backbone grid (:mod:`metricbias.metrics.backbone_grid`) and whether each runs
    here: ``metric, family, variant, paradigm, backbone, runs_on, decomposed, runs, fix`` (the command that makes a
    missing one available)."""
    from ...metrics import backbone_grid

    encoders = backbone_grid.ENCODERS if encoders is None else encoders
    configs = backbone_grid.configs(encoders)
    gone = backbone_grid.missing(encoders).set_index("metric")["reason"]
    from ... import backbones

    # trained parts ship under models/, but they run only where their frozen base encoder is installed
    base_here = configs["backbone"].isin(backbones.available())
    runs = ~configs["metric"].isin(gone.index) & base_here
    fix = configs["metric"].map(lambda m: _fix(gone[m]) if m in gone.index else "")
    fix = fix.where(base_here | (fix != ""), "metricbias install-backbone " + configs["backbone"])
    return configs.assign(runs=runs, fix=fix)


def grid_backbones(availability: pd.DataFrame) -> dict:
    """Which encoders of the grid ran (``ran``: at least one configuration; ``complete``: every configuration the
    decomposition uses) and which did not (``absent``), with the commands that would add the missing parts."""
    decomposed = availability[availability["decomposed"]]
    complete = [b for b, g in decomposed.groupby("backbone", sort=False) if g["runs"].all()]
    ran = [b for b, g in availability.groupby("backbone", sort=False) if g["runs"].any()]
    absent = [b for b in dict.fromkeys(availability["backbone"]) if b not in ran]
    fixes = list(dict.fromkeys(f for f in availability.loc[~availability["runs"], "fix"] if f))
    return {"ran": ran, "complete": complete, "absent": absent, "fixes": fixes,
            "configurations_run": int(availability["runs"].sum()), "configurations": len(availability)}


def grid_runs(availability: pd.DataFrame) -> pd.DataFrame:
    """Per encoder of the grid: its configurations, how many ran, whether every configuration the decomposition
    uses ran ("yes"/"no"), and the command that adds the missing parts ("" when none). The backbone's share needs
    two encoders with "yes"."""
    rows = []
    for backbone, g in availability.groupby("backbone", sort=False):
        used = g[g["decomposed"]]
        rows.append({"backbone": backbone, "configurations": len(g), "ran": int(g["runs"].sum()),
                     "every paradigm": "yes" if len(used) and used["runs"].all() else "no",
                     "to add the missing parts": "; ".join(dict.fromkeys(f for f in g.loc[~g["runs"], "fix"] if f))})
    return pd.DataFrame(rows)


def grid_entries(availability: pd.DataFrame) -> list:
    """The grid's configurations that run here, as :class:`~metricbias.metrics.Spec` (for ``score_metrics``)."""
    from ...metrics import backbone_grid

    ran = set(availability.loc[availability["runs"], "metric"])
    encoders = list(dict.fromkeys(availability["backbone"]))
    return [e for e in backbone_grid.entries(encoders, only_available=False) if e.label in ran]


def grid_decomposition(scores: pd.DataFrame, availability: pd.DataFrame, *, n_resamples: int = 999,
                       seed: int = 0, measure: str = "eq2") -> pd.DataFrame:
    """:func:`metricbias.bias.decomposition.decompose` on the decomposed configurations of the backbones complete
    here (:func:`grid_backbones`) of ``measure`` (Eq. 2 or the size-robust bias); an empty table (same columns) with
    fewer than two such backbones."""
    from ...bias import decomposition
    from ...bias.scores import drop_identical

    complete = grid_backbones(availability)["complete"]
    configs = availability[availability["decomposed"] & availability["backbone"].isin(complete)]
    if len(complete) < 2:
        keys = ["share_paradigm", "share_backbone", "share_interaction"]
        return pd.DataFrame(columns=["attribute", "n_pairs", *[f"{k}{e}" for k in keys for e in ("", "_ci_low",
                                                                                                  "_ci_high")],
                                     "p_first_larger"])
    # one configuration per distinct function: identical ones (PRISM-F = BARTScore-F without a target tag) would
    # otherwise count twice in their cell
    scores, _ = drop_identical(scores[scores["metric"].isin(configs["metric"])])
    configs = configs[configs["metric"].isin(scores["metric"])]
    return decomposition.decompose(scores, configs, n_resamples=n_resamples, seed=seed, measure=measure)


def without_identical(availability: pd.DataFrame, merged: pd.DataFrame) -> pd.DataFrame:
    """The grid's :func:`grid_availability` with the configurations that :func:`metricbias.bias.scores.
    identical_configurations` found identical to another (``merged``) marked: ``same_as`` names the one kept, and
    a merged configuration is neither decomposed nor counted."""
    same_as = availability["metric"].map(merged.set_index("metric")["same_as"]) if len(merged) else None
    out = availability.assign(same_as=same_as if same_as is not None else np.nan)
    out["decomposed"] = out["decomposed"] & out["same_as"].isna()
    return out


def decomposed_names(availability: pd.DataFrame) -> str:
    """The grid configurations the decomposition uses, each named once without its encoder ("BERTScore-F,
    MoverScore, Regression and BARTScore-F"): the metric labels end in the encoder's short name."""
    used = availability[availability["decomposed"]]
    return joined(dict.fromkeys(m.rsplit("-", 1)[0] for m in used["metric"]))


def without_paradigm(availability: pd.DataFrame, paradigm: str) -> pd.DataFrame:
    """The grid's availability with ``paradigm``'s configurations left out of the decomposition: the claim re-read
    on the other paradigms alone (how much the verdict rests on one paradigm)."""
    return availability.assign(decomposed=availability["decomposed"] & (availability["paradigm"] != paradigm))


def identical_table(merged: pd.DataFrame) -> pd.DataFrame:
    """The configurations merged into another because their scores are identical on every side of every pair
    (:func:`metricbias.bias.scores.identical_configurations`), in words: which one, into which, on how many pairs,
    and the largest difference of their scores (0: to every digit)."""
    return merged[["metric", "same_as", "pairs", "largest_difference"]].rename(columns={
        "metric": "configuration", "same_as": "merged into", "largest_difference": "largest difference"})


def paradigm_share_per_backbone(bias: pd.DataFrame, availability: pd.DataFrame) -> pd.DataFrame:
    """Per backbone: eta squared of the average bias (over attributes) of its decomposed configurations grouped
    by paradigm — how much of the spread among one backbone's metrics lies between the paradigms."""
    from ...bias.decomposition import variance_explained

    configs = availability[availability["decomposed"] & availability["runs"]].set_index("metric")
    avg = bias[bias["metric"].isin(configs.index)].groupby("metric")["bias"].mean()
    rows = []
    for backbone, group in configs.groupby("backbone", sort=False):
        values = avg.reindex(group.index)
        rows.append({"backbone": backbone, "configurations": int(values.notna().sum()),
                     "paradigms": int(group.loc[values.notna(), "paradigm"].nunique()),
                     "share_paradigm": variance_explained(values, group["paradigm"])})
    return pd.DataFrame(rows, columns=["backbone", "configurations", "paradigms", "share_paradigm"])


def grid_bias_average(bias: pd.DataFrame, availability: pd.DataFrame) -> pd.DataFrame:
    """The page's view of the grid: one row per configuration run here (paradigm order), its average bias over the
    attributes per backbone, and the attribute where it is largest."""
    from ...metrics.backbone_grid import PARADIGMS

    ran = availability[availability["runs"]]
    t = ran[["metric", "family", "variant", "paradigm", "backbone"]].merge(bias, on="metric")  # the grid's order
    rows = []
    for (paradigm, family, variant), g in t.groupby(["paradigm", "family", "variant"], sort=False):
        row = {"paradigm": paradigm, "family": family, "variant": variant}
        for backbone, b in g.groupby("backbone", sort=False):
            row[f"{backbone}: average bias"] = b["bias"].mean()
            top = b.loc[b["bias"].idxmax()]
            row[f"{backbone}: largest on"] = f"{top['attribute']} ({top['bias']:.2f})"
        rows.append(row)
    out = pd.DataFrame(rows)
    return out.sort_values("paradigm", key=lambda c: c.map({p: i for i, p in enumerate(PARADIGMS)}), kind="stable",
                           ignore_index=True)


#: short names of the two readings in :func:`claim_details`
READINGS = {RELEASED: "released (Table 6)", FIXED: "backbone fixed (live)"}


def _share(value: float, low: float, high: float) -> str:
    """A share with its interval, as the page shows it: "31% [1%, 88%]" ("—" for no interval)."""
    if np.isnan(value):
        return "—"
    return f"{value:.0%}" + ("" if np.isnan(low) or np.isnan(high) else f" [{low:.0%}, {high:.0%}]")


def _points(value: float, low: float, high: float) -> str:
    """A difference of shares in percentage points with its interval: "+83 [+74, +90]" ("—" for none)."""
    if np.isnan(value):
        return "—"
    return f"{100 * value:+.0f}" + ("" if np.isnan(low) or np.isnan(high) else f" [{100 * low:+.0f}, {100 * high:+.0f}]")


def claim_table(claim: pd.DataFrame) -> pd.DataFrame:
    """The fixed-backbone rows of :func:`paradigm_claim` for the page: attribute (in words), each share with its
    95% interval (:func:`_share`), the paradigm's share minus the backbone's in percentage points with the interval
    that decides the verdict (:func:`_points`), and the verdict (the released reading, which has no interval, and
    the interaction and P(paradigm > backbone) are in :func:`claim_details`)."""
    fixed = claim[claim["source"] == FIXED]
    return pd.DataFrame({
        "attribute": fixed["attribute"].str.replace("_", " ").to_numpy(),
        "paradigm's share [95% CI]": [_share(*v) for v in fixed[["share_paradigm", "share_paradigm_ci_low",
                                                                 "share_paradigm_ci_high"]].to_numpy(float)],
        "backbone's share [95% CI]": [_share(*v) for v in fixed[["share_backbone", "share_backbone_ci_low",
                                                                "share_backbone_ci_high"]].to_numpy(float)],
        "share difference, percentage points [95% CI]": [
            _points(*v) for v in fixed[["share_difference", "share_difference_ci_low",
                                        "share_difference_ci_high"]].to_numpy(float)],
        "verdict": fixed["verdict"].to_numpy()})


def claim_details(claim: pd.DataFrame) -> pd.DataFrame:
    """Every row of :func:`paradigm_claim` (both readings) with the interaction's share and P(paradigm share >
    backbone share) over the bootstrap resamples (for the reproducibility appendix)."""
    return pd.DataFrame({
        "reading": claim["source"].map(READINGS), "attribute": claim["attribute"],
        "paradigm": claim["share_paradigm"], "backbone": claim["share_backbone"],
        "interaction": claim["share_interaction"], "P(paradigm > backbone)": claim["p_paradigm_larger"],
        "verdict": claim["verdict"]})


def fixed_backbone_findings(claim: pd.DataFrame, availability: pd.DataFrame) -> dict:
    """Plain values of the claim "the paradigm matters more than the backbone", for the chapter's prose and for
    other pages (glued as ``ch3_fixed_*``): the released reading's two shares (``released_paradigm``,
    ``released_backbone``, ``released_configurations``); the fixed-backbone decomposition of the average bias
    (``paradigm``, ``paradigm_low``, ``paradigm_high``, ``backbone``, ``backbone_low``, ``backbone_high``,
    ``interaction``, ``p_paradigm_larger``, ``verdict``); its size (``cells``: configurations decomposed,
    ``paradigms``, ``backbones``, ``paradigm_names``); and how many attribute rows hold, reverse or are not
    distinguishable (``attributes``, ``holds``, ``reversed``, ``undecided``)."""
    rel = claim[claim["source"] == RELEASED].iloc[0]
    out = {"released_paradigm": float(rel["share_paradigm"]), "released_backbone": float(rel["share_backbone"]),
           "released_configurations": int(rel["n_configurations"])}
    used = availability[availability["decomposed"] & availability["runs"]]
    out.update(cells=len(used), paradigms=int(used["paradigm"].nunique()), backbones=int(used["backbone"].nunique()),
               paradigm_names=joined(p.lower() for p in dict.fromkeys(used["paradigm"])))
    fixed = claim[claim["source"] == FIXED]
    average = fixed[fixed["attribute"] == "average"]
    # without a second backbone (a profile that runs one) there is no decomposition: every key, undefined
    out.update({k: float("nan") for k in ("paradigm", "paradigm_low", "paradigm_high", "backbone", "backbone_low",
                                          "backbone_high", "interaction", "p_paradigm_larger")},
               verdict="not comparable")
    if len(average):
        f = average.iloc[0]
        out.update({k: float(f[c]) for k, c in [
            ("paradigm", "share_paradigm"), ("paradigm_low", "share_paradigm_ci_low"),
            ("paradigm_high", "share_paradigm_ci_high"), ("backbone", "share_backbone"),
            ("backbone_low", "share_backbone_ci_low"), ("backbone_high", "share_backbone_ci_high"),
            ("interaction", "share_interaction"), ("p_paradigm_larger", "p_paradigm_larger")]})
        out["verdict"] = str(f["verdict"])
    attributes = fixed[fixed["attribute"] != "average"]
    out.update(attributes=len(attributes), holds=int((attributes["verdict"] == "holds").sum()),
               reversed=int((attributes["verdict"] == "reverses").sum()))
    out["undecided"] = out["attributes"] - out["holds"] - out["reversed"]
    return out


def attribute_tally(claim: pd.DataFrame) -> str:
    """Where the fixed-backbone claim holds, attribute by attribute and on the average (``claim``:
    :func:`paradigm_claim`), as the clause after "the claim": "holds on all 6 attributes and on the average" when
    every row agrees; otherwise each verdict with the attributes it has (:func:`.names.of_all`), then the average's:
    "holds on 4 of the 6 attributes (age, race, religion and gender), is not distinguishable at this size on 2 of
    the 6 attributes (…), and on the average holds"."""
    fixed = claim[claim["source"] == FIXED]
    rows = fixed[fixed["attribute"] != "average"].assign(attribute=lambda f: f["attribute"].str.replace("_", " "))
    average = fixed.loc[fixed["attribute"] == "average", "verdict"]
    mean_verdict = str(average.iloc[0]) if len(average) else NOT_COMPARABLE
    attributes = list(rows["attribute"])
    verdicts = list(dict.fromkeys(rows["verdict"]))
    def verb(v: str) -> str:  # "holds", "reverses"; "is not distinguishable at this size", "is not comparable"
        return v if v in ("holds", "reverses") else f"is {v}"

    if verdicts == [mean_verdict]:
        return f"{verb(mean_verdict)} on {of_all(attributes, attributes, 'attributes')} and on the average"
    parts = [f"{verb(v)} on {of_all(list(rows.loc[rows['verdict'] == v, 'attribute']), attributes, 'attributes')}"
             for v in verdicts]
    return f"{', '.join(parts)}, and on the average {verb(mean_verdict)}"


def effect_directions(bias: pd.DataFrame, availability: pd.DataFrame) -> pd.DataFrame:
    """Per attribute and for the bias averaged over the attributes (``average``): the main effects of the
    decomposed grid, read as directions. Each (paradigm, backbone) cell is the mean bias of its configurations; a
    paradigm's mean averages its cells over the backbones, a backbone's over the paradigms. Columns: ``attribute``,
    ``top_paradigm`` (the most biased), ``paradigm_spread`` (largest minus smallest paradigm mean, points),
    ``top_backbone``, ``backbone_spread``."""
    configs = availability[availability["decomposed"] & availability["runs"]]
    t = configs[["metric", "paradigm", "backbone"]].merge(bias[["metric", "attribute", "bias"]], on="metric")
    average = t.groupby(["metric", "paradigm", "backbone"], as_index=False, sort=False)["bias"].mean()
    rows = []
    for attribute, g in [*t.groupby("attribute", sort=False), ("average", average)]:
        cells = g.groupby(["paradigm", "backbone"], sort=False)["bias"].mean().unstack("backbone")
        paradigm, backbone = cells.mean(axis=1), cells.mean(axis=0)
        rows.append({"attribute": attribute, "top_paradigm": paradigm.idxmax(),
                     "paradigm_spread": paradigm.max() - paradigm.min(), "top_backbone": backbone.idxmax(),
                     "backbone_spread": backbone.max() - backbone.min()})
    return pd.DataFrame(rows, columns=["attribute", "top_paradigm", "paradigm_spread", "top_backbone",
                                       "backbone_spread"])
