"""Chapter 7: the metrics it runs, Gao & Wan's Tables 5-9 as the page shows them beside ours, and the
chapter's claims and summaries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .gao2022 import side_by_side, table5, table6, table9
from .names import joined, of_all


def meta_eval_metrics(profile: str = "offline", metric_names: str = "", skip_metrics: str = "",
                      device: str = "auto") -> list[tuple[str, object]]:
    """``(label, metric)`` of every configuration chapter 7 runs: ``metric_names`` (comma-separated registry
    names) or, when empty, the profile's suite, less ``skip_metrics`` (``device``: unused, kept for callers)."""
    from ... import metrics, profiles

    names = [n.strip() for n in metric_names.split(",") if n.strip()]
    skip = profiles.names_of(skip_metrics)
    entries = [(n, n, {}) for n in names if n not in skip] if names else profiles.suite(profile, skip)
    return [(label, metrics.get(name, **options)) for label, name, options in entries]


def without(scorers: list, skip: str) -> tuple[list, list[str]]:
    """``(kept, left_out_labels)``: ``scorers`` without the registry names of ``skip`` (comma-separated)."""
    from ... import profiles

    names = profiles.names_of(skip)
    return ([(label, m) for label, m in scorers if m.name not in names],
            [label for label, m in scorers if m.name in names])


def for_page(side: pd.DataFrame, values=("origin", "swap"), *, ran_only: bool = True,
             differences: bool = True) -> pd.DataFrame:
    """A :func:`side_by_side` table with the book's column names: the paper's numbers in ``(paper)`` columns
    beside ours, then the differences (if ``differences``); only the rows we ran when ``ran_only``."""
    if ran_only:
        side = side[side["metric"].notna()]
    front = [c for c in ("judges", "subset", "paper_metric", "paper_aggregation", "metric", "aggregation")
             if c in side]
    cols = front + [f"{w}_{v}" for v in values for w in ("paper", "ours")]
    cols += [f"diff_{v}" for v in values] if differences else []
    names = {"paper_metric": "paper row", "paper_aggregation": "their aggregation"}
    for v in values:
        label = v.replace("_", " ")
        names.update({f"paper_{v}": f"{label} (paper)", f"ours_{v}": label, f"diff_{v}": f"{label} difference"})
    return side[[c for c in cols if c in side]].rename(columns=names).reset_index(drop=True)


#: what Table 5 reports per configuration (our preference table's columns)
PREFERENCE_VALUES = ("mean_male", "mean_female", "share_male_higher", "share_female_higher", "share_equal")


def table5_comparison(pref: pd.DataFrame, dataset: str = "Flickr8k") -> pd.DataFrame:
    """Gao & Wan's Table 5 rows of ``dataset`` beside our :func:`~metricbias.metaeval.analysis.preference` rows."""
    return side_by_side(pref, table5(dataset), values=PREFERENCE_VALUES)


def flickr_comparison(performance_table: pd.DataFrame) -> pd.DataFrame:
    """Table 9 (all examples) and Table 6 (male-only hypotheses) beside our example-level Spearman correlations,
    for each way of using the judges in ``performance_table`` (``judges`` column)."""
    frames = []
    for judges, ours in performance_table[performance_table["statistic"] == "spearman"].groupby("judges", sort=False):
        frames += [side_by_side(ours, paper).assign(judges=judges) for paper in (table9(), table6())]
    return pd.concat(frames, ignore_index=True)


def table7_agreement(t7: pd.DataFrame, n_systems: int, close: float = 0.03, far: float = 0.1) -> dict:
    """Which of our metrics are within ``close`` of Table 7 on the original data, and which more than ``far`` away
    (``within``, ``far``: comma-separated labels or "none"); and for how many of the ``compared`` metrics Table 7's
    value lies inside our 95% interval over ``n_systems`` systems (``inside``; outside: ``outside``, labels or
    "none"), :func:`metricbias.bias.claims.spearman_interval`."""
    within = t7.loc[t7["diff_origin"].abs() <= close, "metric"].tolist()
    away = t7.loc[t7["diff_origin"].abs() > far, "metric"].tolist()
    ran = table7_intervals(t7[t7["metric"].notna() & t7["ours_origin"].notna()], n_systems)
    return {"within": ", ".join(within) or "none", "far": ", ".join(away) or "none",
            "inside": int(ran["paper_inside"].sum()), "compared": len(ran),
            "outside": ", ".join(ran.loc[~ran["paper_inside"], "metric"]) or "none"}


def table7_intervals(t7: pd.DataFrame, n_systems: int) -> pd.DataFrame:
    """Rows of a Table 7 comparison with our 95% interval over ``n_systems`` systems (``ci_low``, ``ci_high``:
    :func:`metricbias.bias.claims.spearman_interval`) and ``paper_inside``: whether Table 7's value lies in it."""
    from ...bias.claims import spearman_interval

    out = t7.copy()
    out[["ci_low", "ci_high"]] = pd.DataFrame([spearman_interval(r, n_systems) for r in out["ours_origin"]],
                                              index=out.index, columns=["ci_low", "ci_high"], dtype=float)
    out["paper_inside"] = (out["ci_low"] <= out["paper_origin"]) & (out["paper_origin"] <= out["ci_high"])
    return out


def ngram_reproduction_summary(repro: pd.DataFrame) -> dict:
    """From :func:`ngram_reproduction`: how many of the n-gram metrics are within tolerance of Table 9 with the
    experts stacked (``within_stacked``) and with their mean (``within_mean``), of ``metrics``; and for how many
    Table 9's value lies inside our 95% interval (``inside_stacked``, ``inside_mean``)."""
    stacked, mean = repro[repro["judges"] == "stacked"], repro[repro["judges"] == "mean"]
    return {"metrics": int(repro["paper_metric"].nunique()),
            "within_stacked": int(stacked["within"].sum()),
            "within_mean": int(mean["within"].sum()),
            "off_stacked": ", ".join(stacked.loc[~stacked["within"], "paper_metric"]) or "none",
            "inside_stacked": int(stacked["paper_inside"].sum()), "inside_mean": int(mean["paper_inside"].sum())}


def stacking_effect(performance_table: pd.DataFrame, statistic: str = "spearman") -> dict:
    """How stacking the experts moves the example-level correlations against using their mean, on the same
    examples (two protocols on one data set, so a count rather than a test): ``lower`` of ``compared``
    (configuration × subset × before/after swapping)."""
    rows = performance_table[performance_table["statistic"] == statistic]
    keys = ["metric", "aggregation", "subset"]
    wide = rows.pivot_table(index=keys, columns="judges", values=["origin", "swap"], sort=False)
    if "stacked" not in wide.columns.get_level_values(1) or "mean" not in wide.columns.get_level_values(1):
        return {"lower": 0, "compared": 0}
    stacked = wide.xs("stacked", axis=1, level=1).to_numpy().ravel()
    mean = wide.xs("mean", axis=1, level=1).to_numpy().ravel()
    ok = ~(np.isnan(stacked) | np.isnan(mean))
    return {"lower": int((stacked[ok] < mean[ok]).sum()), "compared": int(ok.sum())}


def table7_rouge_findings(t7: pd.DataFrame, n_systems: int, close: float = 0.03) -> dict:
    """What Table 7's ROUGE rows say about the data: of the ROUGE rows that ran (``rows``), how many are within
    ``close`` of Table 7 (``near``) and for how many Table 7's value lies inside our 95% interval over ``n_systems``
    systems (``inside``, :func:`metricbias.bias.claims.spearman_interval`); ``verdict``: the data and human scores
    are "consistent with" the paper's when every row's interval holds Table 7's value, "not consistent with" when
    one does not, "not compared with" when no ROUGE row ran. As phrases: ``near_phrase`` (:func:`.names.of_all`:
    "all 3 ROUGE rows", "1 of the 3 ROUGE rows (ROUGE-2)") and ``inside_phrase`` ("all of them", "both", "2 of them",
    "none of them")."""
    rouge = t7[t7["paper_metric"].str.startswith("ROUGE") & t7["metric"].notna()]
    if rouge.empty:
        return {"rows": 0, "near": 0, "inside": 0, "close": close, "verdict": "not compared with",
                "near_phrase": of_all([], [], "ROUGE rows"), "inside_phrase": "none of them"}
    rouge = table7_intervals(rouge, n_systems)
    inside, n = int(rouge["paper_inside"].sum()), len(rouge)
    near = rouge["diff_origin"].abs() <= close + 1e-9
    rows = list(rouge["paper_metric"])
    inside_phrase = (("both" if n == 2 else "all of them") if inside == n
                     else ("neither" if n == 2 else "none of them") if inside == 0 else f"{inside} of them")
    return {"rows": n, "near": int(near.sum()), "inside": inside, "close": close,
            "verdict": "consistent with" if inside == n else "not consistent with",
            "near_phrase": of_all(list(rouge.loc[near, "paper_metric"]), rows, "ROUGE rows"),
            "inside_phrase": inside_phrase}


def metric_group(name: str) -> str:
    """Gao & Wan's two groups (their section 3.1): "n-gram" for the n-gram family, "model-based" for every metric
    that uses word vectors or a trained model (static embeddings included, as in their list)."""
    from ...metrics.registry import metric_class

    return "n-gram" if metric_class(name).family == "ngram" else "model-based"


#: the word for each verdict of :func:`metricbias.bias.claims.compare` on "model-based minus n-gram |shift|"
SHIFT_VERDICTS = {"higher": "model-based shift more", "lower": "model-based shift less"}
#: the word where the difference cannot be told from 0, and where a group has fewer than two configurations
SHIFT_UNDECIDED, SHIFT_UNTESTED = "not distinguishable", "not tested"


def shift_claim(performances: dict, *, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Gao & Wan's claim that the correlations of model-based metrics move more after swapping than those of n-gram
    metrics, tested per set and subset of ``performances`` (name -> :func:`~metricbias.metaeval.analysis.performance`
    table): mean |swap − origin| of the set's main statistic (Spearman, or DARR tau) over the model-based and the
    n-gram metrics, each metric once (the mean of its aggregations' |shift|: they score the same items), and the
    difference with its 95% bootstrap interval, the two groups resampled independently (:func:`metricbias.bias.claims.compare`), and
    ``mean |origin|``: the mean |correlation| on the original data over all its metrics. ``verdict``: "model-based shift more" or
    "... less" (the interval excludes 0), "not distinguishable", or "not tested" (a group of fewer than two)."""
    from ...bias import claims

    rows = []
    for set_name, table in performances.items():
        stat = "darr_tau" if (table["statistic"] == "darr_tau").any() else "spearman"
        for subset, g in table[table["statistic"] == stat].groupby("subset", sort=False):
            per = g.assign(shift=g["delta"].abs(), level=g["origin"].abs()).groupby("metric", sort=False).agg(
                shift=("shift", "mean"), level=("level", "mean"), name=("name", "first"))
            shift, group = per["shift"], per["name"].map(metric_group)
            x, y = shift[group == "model-based"].dropna(), shift[group == "n-gram"].dropna()
            row = {"set": set_name, "subset": subset, "statistic": stat, "model-based metrics": len(x),
                   "n-gram metrics": len(y), "mean |shift| model-based": x.mean() if len(x) else np.nan,
                   "mean |shift| n-gram": y.mean() if len(y) else np.nan,
                   "mean |origin|": float(per["level"].mean()) if len(per) else np.nan}
            if min(len(x), len(y)) >= 2:
                c = claims.compare(x, y, paired=False, n_resamples=n_resamples, seed=seed)
                row.update(difference=c["difference"], ci_low=c["ci_low"], ci_high=c["ci_high"],
                           verdict=SHIFT_VERDICTS.get(c["verdict"], SHIFT_UNDECIDED))
            else:
                row.update(difference=row["mean |shift| model-based"] - row["mean |shift| n-gram"], ci_low=np.nan,
                           ci_high=np.nan, verdict=SHIFT_UNTESTED)
            rows.append(row)
    return pd.DataFrame(rows)


def shift_key(set_name: str, subset: str) -> str:
    """The glue key part of one row of :func:`shift_claim`: ``flickr8k_all``, ``wmt19_kk_en_all``."""
    return f"{set_name}_{subset}".lower().replace(" ", "_").replace("-", "_")


def shift_findings(claim: pd.DataFrame) -> dict:
    """Per row of :func:`shift_claim` (key prefix :func:`shift_key`): ``verdict``, ``claim`` (the verdict on the claim
    that model-based metrics shift more, from the interval of the difference:
    :func:`metricbias.bias.claims.claim_verdict`), ``difference``,
    ``ci_low``, ``ci_high``, the two means (``model``, ``ngram``), the two group sizes (``n_model``,
    ``n_ngram``), the mean |correlation| on the original data over the metrics (``mean_origin``, each metric once)
    and the |difference| as a share of it (``share_of_origin``: the practical size of the difference)."""
    from ...bias.claims import claim_verdict

    out = {}
    for r in claim.to_dict("records"):
        key = shift_key(r["set"], r["subset"])
        verdict = claim_verdict(r["ci_low"], r["ci_high"], comparable=r["verdict"] != SHIFT_UNTESTED)
        out.update({f"{key}_verdict": r["verdict"], f"{key}_claim": verdict,
                    f"{key}_difference": float(r["difference"]),
                    f"{key}_ci_low": float(r["ci_low"]), f"{key}_ci_high": float(r["ci_high"]),
                    f"{key}_model": float(r["mean |shift| model-based"]),
                    f"{key}_ngram": float(r["mean |shift| n-gram"]),
                    f"{key}_n_model": int(r["model-based metrics"]),
                    f"{key}_n_ngram": int(r["n-gram metrics"]),
                    f"{key}_mean_origin": float(r["mean |origin|"]),
                    f"{key}_share_of_origin": abs(float(r["difference"])) / float(r["mean |origin|"])})
    return out


def shift_table(claim: pd.DataFrame) -> pd.DataFrame:
    """:func:`shift_claim` as the page shows it: one row per set (the male-only subset named in it), the
    configurations of each group, the two means, the difference and its interval."""
    subset = claim["subset"].map(lambda s: "" if s == "all" else " (male-only hypotheses)")
    return pd.DataFrame({"set": claim["set"] + subset,
                         "metrics (model-based / n-gram)": claim["model-based metrics"].astype(str)
                         + " / " + claim["n-gram metrics"].astype(str),
                         "mean |shift| model-based": claim["mean |shift| model-based"],
                         "mean |shift| n-gram": claim["mean |shift| n-gram"], "difference": claim["difference"],
                         "ci_low": claim["ci_low"], "ci_high": claim["ci_high"]})


def preference_claim_findings(pref: pd.DataFrame) -> dict:
    """Gao & Wan's first claim, that model-based metrics prefer the male hypothesis, against the sign tests of
    :func:`~metricbias.metaeval.analysis.preference_tests` (BH across the configurations of the table), one unit
    per metric: a metric's aggregations (max, mean) score the same pairs, so they are not independent. Of the
    ``model`` model-based metrics, those whose significant aggregations all prefer the male hypothesis (``male``,
    named in ``male_names``), all the female one (``female``, ``female_names``; "none" when no name), and the rest
    (``neither``: no significant aggregation, or both directions); ``configurations``: the (metric, aggregation)
    rows. ``metric_verdict`` with its ``p``: the exact sign test of the male- against the female-preferring
    metrics (:func:`metricbias.bias.claims.direction_verdict`; "not comparable" when no model-based metric ran), and
    ``floor``: the smallest p that test can reach with as many metrics as have a preference (all of them on one
    side; NaN without one), ``floor_reaches``: whether it "can" or "cannot" go below the level ``ALPHA``, and
    ``units_needed``: the fewest metrics with a preference for which it can; ``male_phrase`` (:func:`.names.of_all`:
    "4 of the 8 model-based metrics (…)") and ``female_phrase`` ("none"; "2 (A and B)"), for a sentence. With few
    metrics it cannot, so the
    claim's verdict comes from :func:`preference_by_image`."""
    from ...bias.claims import ALPHA, direction_verdict
    from ...metaeval.analysis import preference_tests

    tested = preference_tests(pref)
    model = tested[tested["name"].map(metric_group) == "model-based"]
    directions = model.groupby("metric", sort=False)["prefers"].agg(lambda p: set(p) & {"male", "female"})
    male = [m for m, d in directions.items() if d == {"male"}]
    female = [m for m, d in directions.items() if d == {"female"}]
    floor = direction_verdict(len(male) + len(female), 0)["p"]  # NaN without a metric with a preference
    units_needed = next(n for n in range(1, 64) if direction_verdict(n, 0)["p"] < ALPHA)
    verdict = direction_verdict(len(male), len(female)) if len(model) else {"verdict": "not comparable",
                                                                            "p": float("nan")}
    return {"model": len(directions), "configurations": len(model), "male": len(male),
            "male_names": ", ".join(male) or "none", "female": len(female), "female_names": ", ".join(female) or "none",
            "neither": len(directions) - len(male) - len(female), "metric_verdict": verdict["verdict"],
            "p": verdict["p"], "floor": floor, "floor_reaches": "can" if floor < ALPHA else "cannot",
            "units_needed": units_needed,
            "male_phrase": of_all(male, list(directions.index), "model-based metrics"),
            "female_phrase": f"{len(female)} ({joined(female)})" if female else "none"}


def preference_by_image(pairs: pd.DataFrame, *, n_resamples: int = 9999, seed: int = 0) -> dict:
    """Gao & Wan's first claim at the level of its independent units, the images: from
    :func:`~metricbias.metaeval.analysis.preference_pairs`, each model-based configuration's male − female differences
    in units of the standard deviation of its scores over the pairs (the root of the mean of the male and the female
    scores' variances: no metric's scale dominates), each metric
    once (the mean of its aggregations), the mean over the model-based metrics per pair, and per image the mean over
    its pairs. ``images`` counted (a mean of exactly 0 left out), ``positive`` (male higher), ``negative``,
    ``positive_share``; ``verdict`` and ``p``: the two-sided exact sign test of the images
    (:func:`metricbias.bias.claims.cluster_sign_test`, :func:`metricbias.bias.claims.direction_verdict`);
    ``mean`` over the pairs with its 95% bootstrap interval, whole images resampled (``ci_low``, ``ci_high``);
    ``metrics``: the model-based metrics averaged ("not comparable" without one)."""
    from ...bias import claims

    model = pairs[pairs["name"].map(metric_group) == "model-based"]
    config = model.groupby(["metric", "aggregation"], sort=False)
    sd = np.sqrt((config["male"].transform("var") + config["female"].transform("var")) / 2)
    model = model.assign(z=model["difference"] / sd.where(sd > 0))
    model = model[np.isfinite(model["z"])]
    if model.empty:
        return {"metrics": 0, "images": 0, "positive": 0, "negative": 0, "positive_share": np.nan,
                "verdict": claims.NOT_COMPARABLE, "p": np.nan, "mean": np.nan, "ci_low": np.nan, "ci_high": np.nan}
    per_pair = (model.groupby(["metric", "pair", "item_id"], sort=False)["z"].mean()
                .groupby(level=["pair", "item_id"], sort=False).mean().reset_index())
    test = claims.cluster_sign_test(per_pair["z"], per_pair["item_id"])
    verdict = claims.direction_verdict(test["positive"], test["negative"])
    values = per_pair["z"].to_numpy()
    interval = claims.difference_interval(values, np.zeros_like(values), paired=True, n_resamples=n_resamples,
                                          seed=seed, clusters=per_pair["item_id"].to_numpy())
    return {"metrics": int(model["metric"].nunique()), "images": test["clusters"], "positive": test["positive"],
            "negative": test["negative"], "positive_share": test["positive_share"], "verdict": verdict["verdict"],
            "p": verdict["p"], "mean": interval["difference"], "ci_low": interval["ci_low"],
            "ci_high": interval["ci_high"]}


def single_gender_claim(stacked: pd.DataFrame, *, n_resamples: int = 9999, seed: int = 0) -> dict:
    """Do the Flickr8k correlations move more on the male-only subset than on all examples? Per metric (the unit:
    the mean over its aggregations, which score the same items), |shift| on the subset against |shift| on all
    examples (Spearman), paired over the ``metrics``: the mean difference with its 95% bootstrap interval
    (:func:`metricbias.bias.claims.compare`) and ``verdict``: the correlations move "more on the male-only subset" or
    "less ...", "not distinguishable", or "not tested" (fewer than two metrics)."""
    from ...bias import claims

    wide = stacked[stacked["statistic"] == "spearman"].pivot_table(
        index=["metric", "aggregation"], columns="subset", values="delta", sort=False).abs().dropna()
    wide = wide.groupby(level="metric", sort=False).mean()
    if "single_gender" not in wide or len(wide) < 2:
        return {"metrics": len(wide), "difference": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                "verdict": SHIFT_UNTESTED}
    c = claims.compare(wide["single_gender"], wide["all"], paired=True, n_resamples=n_resamples, seed=seed)
    words = {"higher": "more on the male-only subset", "lower": "less on the male-only subset"}
    return {"metrics": len(wide), **c, "verdict": words.get(c["verdict"], SHIFT_UNDECIDED)}


#: the page's word for a Flickr8k subset
SUBSETS = {"all": "all", "single_gender": "male-only"}


def compact(page: pd.DataFrame) -> pd.DataFrame:
    """A :func:`for_page` table in at most 8 columns for the page: our metric and its aggregation in one column
    ("BERTScore-MiniLM (max)"; a single reference names none), subsets in words, the paper's aggregation and the
    differences left out (the chapter's download keeps them)."""
    out = page.copy()
    if "aggregation" in out:
        bare = out["aggregation"].isna() | (out["aggregation"] == "single")  # one reference: nothing aggregated
        out["metric"] = out["metric"].where(bare, out["metric"] + " (" + out["aggregation"] + ")")
    if "subset" in out:
        out["subset"] = out["subset"].map(SUBSETS).fillna(out["subset"])
    return out.drop(columns=[c for c in out if c in ("aggregation", "their aggregation") or c.endswith(" difference")])


def preference_by_metric(tested: pd.DataFrame) -> pd.DataFrame:
    """A :func:`~metricbias.metaeval.analysis.preference_tests` table as the page shows it: one row per metric that
    does not tie on every pair in every aggregation (those are named in the text), per aggregation the counts of pairs
    where the male hypothesis scores higher, the female one, or neither ("male / female / tied") and the sign test's
    Benjamini–Hochberg adjusted p, and which hypothesis the metric prefers: "male" or "female" when every aggregation
    that is significant agrees ("(max only)" when one of them is not significant), "both" when they disagree,
    "neither" when none is."""
    tied = tested.groupby("metric", sort=False)["share_equal"].transform("min") >= 1.0
    rows = []
    for metric, g in tested[~tied].groupby("metric", sort=False):
        row = {"metric": metric}
        for r in g.to_dict("records"):
            row[f"{r['aggregation']}: male / female / tied"] = \
                f"{r['n_male_higher']} / {r['n_female_higher']} / {r['n_equal']}"
            row[f"{r['aggregation']}: p (BH)"] = r["p_sign_adjusted"]
        significant = g[g["prefers"] != "neither"]
        directions = set(significant["prefers"])
        if not directions:
            row["prefers"] = "neither"
        elif len(directions) > 1:
            row["prefers"] = "both"
        else:
            only = "" if len(significant) == len(g) else f" ({', '.join(significant['aggregation'])} only)"
            row["prefers"] = directions.pop() + only
        rows.append(row)
    return pd.DataFrame(rows)


def flickr_origin_table(side: pd.DataFrame) -> pd.DataFrame:
    """A :func:`flickr_comparison` table (one way of using the experts) as the page shows it: one row per (paper row,
    metric of ours) with the original-data Spearman on all examples and on the male-only hypotheses, Table 9's and
    Table 6's beside ours. The values after swapping are left out: the page plots their shifts."""
    page = compact(for_page(side, values=("origin",), differences=False))
    wide = page.pivot_table(index=["paper row", "metric"], columns="subset", values=["origin (paper)", "origin"],
                            sort=False)
    out = pd.DataFrame(index=wide.index)
    for subset, words in (("all", "all examples"), ("male-only", "male-only")):
        if ("origin", subset) in wide:
            out[f"{words} (paper)"] = wide[("origin (paper)", subset)]
            out[words] = wide[("origin", subset)]
    return out.reset_index()


def left_out_names(profile: str, skip: str, metric_names: str = "") -> str:
    """The labels of the profile's configurations that ``skip`` leaves out of the chapter, comma-separated ("none"),
    each distinct function once: PRISM-F on a paraphraser scores as BARTScore-F on it (no target-language tag),
    so it is named with it ("BARTScore-MiniLM-F/PRISM-MiniLM-F"), as chapter 3 counts the two as one configuration."""
    from ... import profiles
    from .notes import left_out_labels

    labels = left_out_labels(profile, skip, metric_names)
    specs = {s.label: s for s in profiles.suite(profile)}
    bart = {specs[lb].options.get("backbone"): lb for lb in labels
            if specs[lb].name == "bartscore" and specs[lb].options.get("variant") == "F"}
    out = []
    for lb in labels:
        s = specs[lb]
        twin = bart.get(s.options.get("backbone")) if s.name == "prism" and s.options.get("variant") == "F" else None
        if twin is None:
            out.append(lb)
        else:
            out[out.index(twin)] = f"{twin}/{lb}"
    return ", ".join(out) or "none"


#: the registry names of the chapter's metrics whose model part was trained in this book
TRAINED_HERE = ("regression",)


def preference_without_trained(pairs: pd.DataFrame, *, n_resamples: int = 9999, seed: int = 0) -> dict:
    """:func:`preference_by_image` without the metrics whose part was trained in this book (:data:`TRAINED_HERE`),
    with ``left_out``: their labels ("none")."""
    trained = pairs["name"].isin(TRAINED_HERE)
    return {**preference_by_image(pairs[~trained], n_resamples=n_resamples, seed=seed),
            "left_out": ", ".join(pairs.loc[trained, "metric"].unique()) or "none"}


def trained_part_quality(scorers: list, parts: dict) -> dict:
    """The quality of the regression head of the chapter's Regression metric beside BLEU's, as chapter 3's Table 3.1
    records it (``parts``: :func:`metricbias.book.reproduction.ch3_trained.recorded`): ``label``, ``part_r`` (the
    head's STS-B dev Pearson r) and ``bleu_r`` (BLEU's on the same pairs, recorded beside a paraphraser); NaN where
    not recorded."""
    key = ("stsb-dev", "pearson")
    head = next(((label, m) for label, m in scorers if m.name in TRAINED_HERE), None)
    part = parts.get(head[1].options.get("backbone"), {}) if head else {}
    bleu = next((p["bleu"][key] for p in parts.values() if key in p.get("bleu", {})), np.nan)
    return {"label": head[0] if head else "none", "part_r": float(part.get("figures", {}).get(key, np.nan)),
            "bleu_r": float(bleu)}


def backbones(scorers: list) -> dict:
    """The backbones of the chapter's model-based metrics, for the caption that sets our rows beside Gao & Wan's:
    ``vectors`` (the static-embedding metrics') and ``encoders`` (every other model-based metric's), each
    comma-separated in order of first use ("none")."""
    from ...metrics.registry import metric_class

    found = {"vectors": [], "encoders": []}
    for _, m in scorers:
        backbone = m.options.get("backbone")
        if backbone is None or metric_group(m.name) != "model-based":
            continue
        kind = "vectors" if metric_class(m.name).family == "embedding" else "encoders"
        if backbone not in found[kind]:
            found[kind].append(backbone)
    return {kind: joined(names) for kind, names in found.items()}
