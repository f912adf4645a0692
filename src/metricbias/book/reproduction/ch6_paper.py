"""Chapter 6: our adapters beside Sun et al.'s own.

* :func:`paper_criteria`: the paper's and the replication's adapters (their printed Table 5 figures) judged by the
  chapter's criteria (:func:`metricbias.mitigation.evaluation.target`), as far as their figures allow;
* :func:`cut_intervals`: our gender bias cut with its 95% bootstrap interval over pairs, and where that interval
  lies against the range of the paper's cuts (:func:`position`);
* :func:`paired_differences`: the chapter's two paired comparisons of Eq. 2 (Table 7's learning rate against the
  default adapter, the invariant wrapper against the adapter) in one table;
* :func:`invariant_findings`: the numbers and verdict words of the wrapper's comparison with the adapter.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy import stats

from ... import datasets
from ...mitigation.evaluation import bias_pairs, metric_for
from ...scoring import score_pairs
from .ch6_adapters import GENDER_SETS
from .names import joined, of_all, share, signed

#: the page's word for each source of :func:`metricbias.book.reproduction.zarkadoula2023.published_tables`
SOURCES = {"Sun et al., Table 5": "paper (Table 5)", "Zarkadoula & Potamopoulou, replication": "replication"}


def _met(ok, judged) -> str:
    return "—" if not judged else "yes" if ok else "no"


def paper_criteria(published: pd.DataFrame, *, gender_cut: float = 0.60, quality_tolerance: float = 0.01
                   ) -> pd.DataFrame:
    """Each adapter row of ``published`` (:func:`~metricbias.book.reproduction.zarkadoula2023.published_tables`)
    judged by two of the chapter's criteria, with the same thresholds: gender bias cut by at least ``gender_cut``,
    and WMT20 Pearson down by at most ``quality_tolerance``, relative. REALSumm's system-level Spearman is left out,
    as the chapter's own quality criteria leave it untested (24 systems). The third criterion (no other attribute's
    bias up by more than 10%) cannot be judged: neither paper reports other attributes. A criterion with no figure
    to judge reads "—"."""
    rows = []
    for r in published[published["variant"] != "original"].to_dict("records"):
        quality = [v for v in (r["wmt20_pearson_avg_change"],) if not np.isnan(v)]
        cut = -r["gender_bias_change"]
        rows.append({"source": SOURCES.get(r["source"], r["source"]), "metric": f"{r['metric']} ({r['backbone']})",
                     "adapter": r["variant"].removeprefix("+").strip(), "gender bias cut": cut,
                     "largest quality change": max(quality, key=abs) if quality else np.nan,
                     f"cut ≥ {gender_cut:.0%}": _met(cut >= gender_cut, True),
                     f"quality loss ≤ {quality_tolerance:.0%}": _met(all(v >= -quality_tolerance for v in quality),
                                                                    bool(quality))})
    return pd.DataFrame(rows)


def paper_criteria_counts(judged: pd.DataFrame, source: str = "paper (Table 5)") -> dict:
    """From :func:`paper_criteria`, for the adapters of ``source``: ``adapters``, how many meet the cut criterion
    (``cut_met``), how many have a quality figure (``quality_judged``) and meet the quality criterion
    (``quality_met``), how many meet both (``both_met``), and those with a quality figure that miss it, each with
    its change (``quality_missed``: "BARTScore (BART-base) −1.03%", "none")."""
    rows = judged[judged["source"] == source]
    cut, quality = rows[[c for c in rows if c.startswith("cut ≥")][0]], rows[[c for c in rows
                                                                               if c.startswith("quality loss")][0]]
    return {"adapters": len(rows), "cut_met": int((cut == "yes").sum()),
            "quality_judged": int((quality != "—").sum()),
            "quality_met": int((quality == "yes").sum()), "both_met": int(((cut == "yes") & (quality == "yes")).sum()),
            "quality_missed": joined(f"{r['metric']} {'−' if r['largest quality change'] < 0 else '+'}"
                                     f"{abs(r['largest quality change']):.2%}"
                                     for r in rows[quality == "no"].to_dict("records"))}


def relative_cut(before, after, *, confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0) -> dict:
    """1 − mean(after)/mean(before) of paired per-pair terms (Eq. 2's terms without and with a mitigation on the
    same pairs), with its BCa bootstrap interval resampling the pairs (:func:`scipy.stats.bootstrap`,
    ``paired=True``). NaN where the terms before average 0 (no bias to cut)."""
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if before.shape != after.shape or before.ndim != 1:
        raise ValueError(f"relative_cut: two 1-d arrays of the same pairs needed, got {before.shape} and {after.shape}")
    if before.size < 2 or before.mean() == 0:
        return {"cut": float("nan"), "ci_low": float("nan"), "ci_high": float("nan")}
    cut = float(1 - after.mean() / before.mean())
    if np.ptp(before) == 0 and np.ptp(after) == 0:
        return {"cut": cut, "ci_low": cut, "ci_high": cut}
    res = stats.bootstrap((before, after), lambda b, a, axis: 1 - a.mean(axis=axis) / b.mean(axis=axis), paired=True,
                          vectorized=True, confidence_level=confidence, n_resamples=n_resamples, method="BCa",
                          rng=np.random.default_rng(seed))
    return {"cut": cut, "ci_low": float(res.confidence_interval.low), "ci_high": float(res.confidence_interval.high)}


def position(low: float, high: float, paper_min: float, paper_max: float) -> str:
    """Where an interval ``[low, high]`` of our cut lies against the paper's cuts ``[paper_min, paper_max]``:
    "above the paper's range" or "below the paper's range" when it excludes every one of the paper's cuts,
    "inside the paper's range" when it lies within it, "across an end of the paper's range" otherwise."""
    if low > paper_max:
        return "above the paper's range"
    if high < paper_min:
        return "below the paper's range"
    return ("inside the paper's range" if paper_min <= low and high <= paper_max else
            "across an end of the paper's range")


def claim_verdict(cuts: pd.DataFrame) -> str:
    """The verdict on the paper's claim that the adapters cut gender bias, from :func:`cut_intervals`: each cut's
    interval by :func:`metricbias.bias.claims.claim_verdict`, joined by :func:`metricbias.bias.claims.joint_verdict`:
    "holds" when every interval lies above 0, "reverses" when any lies below it (an adapter that adds bias), "not
    comparable" without cuts, otherwise not distinguishable."""
    from ...bias.claims import claim_verdict as verdict, joint_verdict

    return joint_verdict([verdict(low, high) for low, high in zip(cuts["ci_low"], cuts["ci_high"])],
                         reverses_on="any")


def _pair_cuts(adapters: dict, attributes, *, sample_size: int, seed: int, n_resamples: int, cache,
               device: str):
    """(label, dataset, attribute, pairs, :func:`relative_cut`) per adapter and (set, attribute) of ``attributes``:
    the same pairs scored without and with the adapter, each metric's terms of Eq. 2 on each set."""
    from ...bias.pairwise import pair_terms

    pairs = datasets.sample(bias_pairs(list(attributes)), sample_size, seed)
    for label, found in adapters.items():
        scored = [score_pairs(pairs, metric_for(folder, meta=found.meta, device=device), cache=cache, label=label)
                  for folder in (None, found.folder)]
        for (dataset, attribute), idx in scored[0].groupby(["dataset", "attribute"], sort=False).indices.items():
            terms = [pair_terms(t["score_1"].to_numpy()[idx], t["score_2"].to_numpy()[idx],
                                metric=t["metric"].iloc[0], attribute=f"{dataset} {attribute}") for t in scored]
            yield label, dataset, attribute, len(idx), relative_cut(*terms, n_resamples=n_resamples, seed=seed)


def cut_intervals(adapters: dict, paper_min: float, paper_max: float, *, attribute: str = "gender",
                  sample_size: int = 0, seed: int = 0, n_resamples: int = 9999, cache=None,
                  device: str = "auto") -> pd.DataFrame:
    """Per adapter (label -> :class:`~metricbias.mitigation.training.Shipped`) and gender set: the cut of Eq. 2 bias
    on the same pairs, with its 95% interval (:func:`relative_cut`; each metric rescaled with its own Eq. 1, as
    the before/after table does) and its :func:`position` against the paper's cuts."""
    return pd.DataFrame([{"metric": label, "gender set": GENDER_SETS.get(dataset, dataset), "pairs": n, **cut,
                          "against the paper": position(cut["ci_low"], cut["ci_high"], paper_min, paper_max)}
                         for label, dataset, _, n, cut in _pair_cuts(adapters, [attribute], sample_size=sample_size,
                                                                     seed=seed, n_resamples=n_resamples, cache=cache,
                                                                     device=device)])


def change_intervals(adapters: dict, attributes, *, sample_size: int = 0, seed: int = 0, n_resamples: int = 1999,
                     cache=None, device: str = "auto") -> pd.DataFrame:
    """Per adapter and (set, attribute) of ``attributes`` (the other attributes): the relative change of Eq. 2 bias,
    mean(after)/mean(before) − 1 of the paired terms, with its 95% BCa interval over pairs (:func:`relative_cut`
    turned round: ``change`` = −cut, ``ci_low`` = −cut's upper end); rows ``metric``, ``dataset``, ``attribute``,
    ``pairs``, ``change``, ``ci_low``, ``ci_high``. ``n_resamples`` is lower than the cut's by default: 17 sets."""
    return pd.DataFrame([{"metric": label, "dataset": dataset, "attribute": attribute, "pairs": n,
                          "change": -cut["cut"], "ci_low": -cut["ci_high"], "ci_high": -cut["ci_low"]}
                         for label, dataset, attribute, n, cut in _pair_cuts(
                             adapters, attributes, sample_size=sample_size, seed=seed, n_resamples=n_resamples,
                             cache=cache, device=device)],
                        columns=["metric", "dataset", "attribute", "pairs", "change", "ci_low", "ci_high"])


def on_current_pairs(results: pd.DataFrame, adapters: dict, attributes=None, *, seed: int = 0, cache=None,
                     device: str = "auto") -> tuple[pd.DataFrame, list[str]]:
    """``results`` (a before/after table) with each adapter's bias rows measured on the current pairs: a table
    recorded with an adapter on an earlier version of the built sets (a cell's ``n`` differs from the pairs
    :func:`~metricbias.mitigation.evaluation.bias_pairs` gives now) gets its bias rows recomputed here, its quality
    rows kept; the intervals and tests of the chapter score the current pairs, so the points must too. Returns the
    table and the labels recomputed."""
    from ...mitigation.evaluation import compare

    current = bias_pairs(attributes).groupby(["dataset", "attribute"]).size()
    frames, redone = [], []
    for label, table in results.groupby("metric", sort=False):
        bias = table[table["kind"] == "bias"]
        sizes = current.reindex(list(zip(bias["dataset"], bias["name"]))).to_numpy()
        if (sizes == bias["n"].to_numpy()).all():
            frames.append(table)
            continue
        fresh = compare(adapters[label].folder, attributes=list(bias["name"].unique()), measures=(), seed=seed,
                        cache=cache, device=device).assign(metric=label, backbone=table["backbone"].iloc[0])
        frames.append(pd.concat([fresh[table.columns], table[table["kind"] != "bias"]], ignore_index=True))
        redone.append(label)
    return pd.concat(frames, ignore_index=True), redone


def paired_differences(configuration: pd.DataFrame, versus: pd.DataFrame, label: str = "BERTScore") -> pd.DataFrame:
    """The chapter's paired comparisons of Eq. 2 in one table: Table 7's adapter minus the default one
    (:func:`~metricbias.book.reproduction.ch6_adapters.configuration_difference`) and the invariant wrapper minus
    ``label``'s adapter (:func:`~metricbias.book.reproduction.ch6_invariant.wrapper_versus_adapter`), each with the
    95% interval of the difference and the paired permutation p-value."""
    cols = ["comparison", "metric", "gender set", "difference", "ci_low", "ci_high", "p_value"]
    both = pd.concat([configuration.assign(comparison="Table 7 adapter − default adapter"),
                      versus.assign(comparison="invariant wrapper − adapter", metric=label)], ignore_index=True)
    return both.assign(**{"gender set": both["dataset"].map(GENDER_SETS).fillna(both["dataset"])})[cols]


def _word(row, alpha: float = 0.05) -> str:
    """The wrapper's bias against the adapter's on one set: the interval of the difference must exclude 0 and the
    permutation test reject at ``alpha`` (with a few pairs a BCa interval can exclude 0 where no permutation p can
    fall below 5%)."""
    if row["ci_high"] < 0 and row["p_value"] < alpha:
        return "lower than"
    if row["ci_low"] > 0 and row["p_value"] < alpha:
        return "higher than"
    return "not distinguishable from"


def invariant_findings(comparison: pd.DataFrame, intervals: pd.DataFrame, costs: pd.DataFrame,
                       versus: pd.DataFrame, label: str = "BERTScore", attribute: str = "gender") -> dict:
    """The numbers of the wrapper's comparison with ``label``'s adapter, for the page's prose.

    From :func:`~metricbias.book.reproduction.ch6_invariant.invariant_comparison` (``comparison``): each one's cut
    on each gender set (``wrapper_cut_<set>``, ``adapter_cut_<set>``), largest relative quality loss
    (``wrapper_quality_loss``, ``adapter_quality_loss``: 0 when no quality measure fell); from ``intervals`` (``bias_intervals``) the plain metric's and the wrapper's Eq. 2 on the
    released set with their 95% intervals; from ``versus`` (``wrapper_versus_adapter``) per set the verdict words
    (``versus_<set>``: "lower than", "higher than", "not distinguishable from" the adapter's bias); from ``costs``
    (``invariant_cost``, all sets pooled) ``encoder_passes`` and ``pair_passes``."""
    rows = comparison.set_index("metric")
    wrapper, adapter = rows.loc[f"{label} ({attribute}-invariant)"], rows.loc[label]
    out = {}
    for dataset in ("published", "built"):
        out[f"wrapper_cut_{dataset}"] = float(wrapper[f"gender bias cut ({dataset})"])
        out[f"adapter_cut_{dataset}"] = float(adapter[f"gender bias cut ({dataset})"])
    out.update(wrapper_quality_loss=abs(float(wrapper["largest quality loss"])),  # a loss, never "-0.00%"
               adapter_quality_loss=abs(float(adapter["largest quality loss"])))
    released = intervals[(intervals["metric"] == label) & (intervals["dataset"] == "published")].set_index("variant")
    for key, variant in (("plain", "plain"), ("wrapper", f"{attribute}-invariant")):
        for col in ("value", "ci_low", "ci_high"):
            out[f"{key}_bias_{col}"] = float(released.loc[variant, col])
    for r in versus.to_dict("records"):
        out[f"versus_{r['dataset']}"] = _word(r)
    pooled = costs.set_index("set").loc["all"]
    out.update(encoder_passes=float(pooled["texts"]), pair_passes=float(pooled["pairs"]))
    return out


#: the page's headers for :func:`~metricbias.book.reproduction.ch6_adapters.criteria_summary`
SUMMARY_COLUMNS = {"gender bias cut (published)": "cut (released)", "gender bias cut (built)": "cut (built)"}


#: identifiers inside a criterion's name (quality sets and statistics) as the page writes them
CRITERION_WORDS = {"published": "released", "realsumm": "REALSumm", "spearman": "Spearman", "pearson": "Pearson",
                   "kendall": "Kendall",
                   "darr_tau": "DARR τ", "wmt19-kk-en": "WMT19 kk-en", "flickr8k": "Flickr8k", "stsb-dev": "STS-B dev"}


def criterion_words(criterion: str) -> str:
    """A criterion's name as the page writes it: "quality change on realsumm (spearman)" → "quality change on
    REALSumm (Spearman)", "bias change on built sexual_orientation" → "... built sexual orientation"."""
    words = re.split(r"([\s()]+)", criterion)
    return "".join(CRITERION_WORDS.get(w, w.replace("_", " ")) for w in words)


def missed_names(checks: pd.DataFrame, metric: str, status: str = "missed") -> str:
    """The criteria of ``metric`` with ``status`` ("missed", "not distinguishable", "not tested") in a
    :func:`~metricbias.book.reproduction.ch6_adapters.criteria` table, as the page names them
    (:func:`criterion_words`), comma-separated; "none" when there are none."""
    rows = checks[(checks["metric"] == metric) & (checks["status"] == status)]
    return ", ".join(criterion_words(c) for c in rows["criterion"]) or "none"


def untested(checks: pd.DataFrame, metric: str) -> str:
    """The criteria of ``metric`` without a test in a :func:`~metricbias.book.reproduction.ch6_adapters.criteria`
    table, each with its point value: "REALSumm +3.6%, Flickr8k +0.2%" (the quality set of a quality criterion, the
    criterion's words otherwise); "none"."""
    rows = checks[(checks["metric"] == metric) & (checks["status"] == "not tested")]
    return ", ".join(f"{CRITERION_WORDS.get(r['dataset'], r['dataset']) if r['kind'] == 'quality' else criterion_words(r['criterion'])} "
                     f"{signed(r['value'])}" for r in rows.to_dict("records")) or "none"


def by_kind(checks: pd.DataFrame, metric: str) -> dict:
    """What ``metric``'s criteria with a test say, per kind (:func:`~.ch6_adapters.kind_of`), as the page words
    them: ``cut`` the gender sets whose cut is met ("both gender sets", "1 of the 2 gender sets (built)"),
    ``quality`` each tested quality set's status ("not distinguishable on WMT19 kk-en, met on STS-B dev"; "none"),
    ``other`` the other attributes' sets within the rise ("16 of the 17 sets", "each of the 17 sets"),
    ``other_missed`` and ``other_undecided`` the counts of those missed and not distinguishable, of
    ``other_tested``."""
    from .ch6_adapters import MET, MISSED, NOT_TESTED, UNDECIDED, kind_of

    c = checks[checks["metric"] == metric]
    kinds, tested = kind_of(c), c["status"] != NOT_TESTED
    cut = c[kinds == "cut"]
    quality, other = c[(kinds == "quality") & tested], c[(kinds == "other") & tested]
    return {"cut": of_all([GENDER_SETS.get(d, d) for d in cut.loc[cut["status"] == MET, "dataset"]],
                          [GENDER_SETS.get(d, d) for d in cut["dataset"]], "gender sets"),
            "quality": ", ".join(f"{r['status']} on {CRITERION_WORDS.get(r['dataset'], r['dataset'])}"
                                 for r in quality.to_dict("records")) or "none",
            "other": share(int((other["status"] == MET).sum()), len(other), "sets"),
            "other_missed": int((other["status"] == MISSED).sum()),
            "other_undecided": int((other["status"] == UNDECIDED).sum()), "other_tested": len(other)}


def cut_sensitivity(results: pd.DataFrame, quality: dict | None, published: pd.DataFrame,
                    intervals: pd.DataFrame | None = None, cuts=(0.50, 0.60, 0.70),
                    changes: pd.DataFrame | None = None) -> dict:
    """Which verdicts depend on the 60% gender cut? At each ``cuts`` threshold (the other thresholds as they are),
    our cuts decided by their 95% ``intervals`` (:func:`cut_intervals`, :func:`~.ch6_adapters.criteria`):
    ``<pct>_<metric>_met`` (criteria met, of those with a test) and ``<pct>_<metric>_cut`` (the gender sets whose
    cut is met, :func:`by_kind`); ``<pct>_paper_both`` and ``<pct>_replication_both`` (published adapters passing
    the cut and quality criteria together by their printed values, :func:`paper_criteria`); keys like
    ``50_bertscore_met``."""
    from .ch6_adapters import criteria, criteria_summary

    out = {}
    for cut in cuts:
        pct = f"{cut * 100:.0f}"
        checks = criteria(results, quality, intervals, changes, gender_cut=cut)
        for row in criteria_summary(checks).to_dict("records"):
            key = f"{pct}_{row['metric'].lower().replace(' ', '_')}"
            out[f"{key}_met"] = row["criteria met"]
            out[f"{key}_cut"] = by_kind(checks, row["metric"])["cut"]
        judged = paper_criteria(published, gender_cut=cut)
        out[f"{pct}_paper_both"] = paper_criteria_counts(judged)["both_met"]
        out[f"{pct}_replication_both"] = paper_criteria_counts(judged, "replication")["both_met"]
    return out
