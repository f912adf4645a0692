"""Gender-swapped meta-evaluation (Gao & Wan 2022, section 5).

* :func:`selection` — which examples are gender-neutral in their references and
  male-only in their hypothesis (the preference set), and which are male-only in
  their hypothesis (the "single-gender" subset of Table 6);
* :func:`preference` — Table 5: mean score of the male hypotheses and of their
  swapped (female) versions (and their difference), and the shares of pairs where
  male > female, male < female, male = female;
* :func:`correlations` — every correlation of one set (example level Spearman and
  Kendall, system level Spearman, DARR tau) for one metric, long format;
* :func:`performance` — Tables 6, 7 and 9: the same correlations before and after
  swapping, side by side;
* :func:`top_k` — Figure 1: system-level Spearman on the top-k systems, before
  and after swapping;
* :func:`run` — what ``metricbias metaeval`` writes (through :func:`for_download`: p-values that underflow
  written as a flagged bound);
* :func:`preference_tests` — a sign test per configuration of a :func:`preference` table;
* :func:`preference_pairs` — the pairs behind :func:`preference`, one score difference per pair.

Chapter 7's summaries of these tables are in :mod:`metricbias.book.reproduction.ch7_summaries`.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ..bias import claims
from ..datasets.meta_eval import JudgedSet, PairSet
from ..datasets.swap import gender_of, lexicon
from ..metrics.registry import resolve
from . import correlation as corr
from .scoring import hypothesis_scores, pair_scores


#: columns of :func:`correlations` and of ``metricbias metaeval --out``
COLUMNS = ["dataset", "swap", "metric", "name", "aggregation", "level", "aspect", "subset", "judges", "statistic",
           "value", "p_value", "n", "signature"]
SUBSETS = ("all", "single_gender")
JUDGES = ("mean", "stacked")
#: two scores within this distance count as equal in the preference analysis (float noise, not preference)
EQUAL_ATOL = 1e-9


def selection(dataset: JudgedSet) -> pd.DataFrame:
    """Per hypothesis: ``hypothesis_gender``, ``references_neutral``, ``preference`` and ``single_gender`` masks."""
    lex = lexicon()
    hyp = dataset.frame["hypothesis"].map(lambda t: gender_of(t, lex))
    neutral_cache: dict[str, bool] = {}

    def neutral(refs) -> bool:
        for r in refs:
            if r not in neutral_cache:
                neutral_cache[r] = gender_of(r, lex) == "none"
            if not neutral_cache[r]:
                return False
        return True

    refs_neutral = dataset.frame["references"].map(neutral)
    return pd.DataFrame({"hypothesis_gender": hyp, "references_neutral": refs_neutral,
                         "preference": refs_neutral & (hyp == "male"), "single_gender": hyp == "male"})


def _preference_scores(dataset: JudgedSet, metrics: Iterable, cache=None):
    """``(label, metric, aggregation, male scores, female scores, preference examples)`` for every configuration:
    the scores of the male hypotheses with gender-neutral references and of their swapped (female) versions."""
    sel = selection(dataset)
    male = dataset.subset(sel["preference"])
    if len(male) == 0:
        raise ValueError(f"{dataset.name}: no example has gender-neutral references and a male-only hypothesis")
    female = male.swapped()
    for m in metrics:
        label, metric = resolve(m)
        s_male = hypothesis_scores(metric, male, cache)
        s_female = hypothesis_scores(metric, female, cache)
        for agg in s_male:
            yield label, metric, agg, s_male[agg], s_female[agg], male.frame


def preference(dataset: JudgedSet, metrics: Iterable, cache=None) -> pd.DataFrame:
    """Gao & Wan Table 5 on ``dataset``: one row per (metric, aggregation).

    ``metrics`` are registry names, :class:`Metric` objects, ``(label, Metric)`` pairs or
    ``metrics.suite`` entries (see :func:`labelled`); ``metric`` is the label, ``name`` the registry name.
    """
    rows = []
    for label, metric, agg, a, b, _ in _preference_scores(dataset, metrics, cache):
        equal = np.isclose(a, b, rtol=0.0, atol=EQUAL_ATOL)
        rows.append({"metric": label, "name": metric.name, "aggregation": agg, "n": len(a),
                     "mean_male": float(a.mean()), "mean_female": float(b.mean()),
                     "share_male_higher": float(np.mean((a > b) & ~equal)),
                     "share_female_higher": float(np.mean((a < b) & ~equal)),
                     "share_equal": float(np.mean(equal)), "mean_difference": float(a.mean() - b.mean()),
                     "n_male_higher": int(np.sum((a > b) & ~equal)),
                     "n_female_higher": int(np.sum((a < b) & ~equal)), "n_equal": int(np.sum(equal)),
                     "signature": metric.signature})
    return pd.DataFrame(rows)


def preference_pairs(dataset: JudgedSet, metrics: Iterable, cache=None) -> pd.DataFrame:
    """The pairs behind :func:`preference`, long: one row per (configuration, preference pair) with the pair's
    ``item_id`` (the image of a Flickr8k caption), ``male`` and ``female`` scores and ``difference`` = male −
    female, turned so that a positive difference favours the male hypothesis for a metric where lower is better."""
    frames = []
    for label, metric, agg, a, b, frame in _preference_scores(dataset, metrics, cache):
        sign = -1.0 if getattr(metric, "direction", "higher") == "lower" else 1.0
        frames.append(pd.DataFrame({"metric": label, "name": metric.name, "aggregation": agg,
                                    "item_id": frame["item_id"].to_numpy(), "pair": np.arange(len(a)),
                                    "male": a, "female": b, "difference": sign * (a - b)}))
    return pd.concat(frames, ignore_index=True)


def _check_judges(judges: str) -> None:
    if judges not in JUDGES:
        raise ValueError(f"judges={judges!r} is not one of {list(JUDGES)}")


def _scores(metric, dataset, cache):
    """What :func:`correlations` correlates: :func:`pair_scores` of a :class:`PairSet`, else :func:`hypothesis_scores`."""
    return pair_scores(metric, dataset, cache) if isinstance(dataset, PairSet) else \
        hypothesis_scores(metric, dataset, cache)


def correlations(dataset, metric, *, cache=None, swap: str = "none", subsets: dict | None = None,
                 judges: str = "mean", scores=None) -> pd.DataFrame:
    """Every correlation of ``metric`` on ``dataset`` (a :class:`JudgedSet` or :class:`PairSet`), long format.

    ``subsets`` maps a subset name to a boolean mask over the rows (default:
    ``all`` only); subsets apply to example-level correlations. ``judges``
    (``mean`` or ``stacked``) chooses how aspects with individual judges'
    scores are correlated (``stacked``: Elliott & Keller's protocol). ``scores``: the
    metric's scores on ``dataset`` when already computed (:func:`_scores`), so that one
    scoring serves both ways of using the judges.
    """
    _check_judges(judges)
    label, metric = resolve(metric)
    base = {"dataset": dataset.name.removesuffix(" (gender-swapped)"), "swap": swap, "metric": label,
            "name": metric.name, "signature": metric.signature}
    rows = []
    if isinstance(dataset, PairSet):
        better, worse = _scores(metric, dataset, cache) if scores is None else scores
        if getattr(metric, "direction", "higher") == "lower":  # TER, WMD distance: the better text scores lower
            better, worse = -better, -worse
        t = corr.darr_tau(better, worse, f"{label} on {dataset.name}")
        rows.append({**base, "aggregation": "single", "level": "pairs", "aspect": "relative_ranking", "subset": "all",
                     "judges": "-", "statistic": t["statistic"], "value": t["value"], "p_value": t["p_value"],
                     "n": t["n"]})
        return pd.DataFrame(rows, columns=COLUMNS)
    scores = _scores(metric, dataset, cache) if scores is None else scores
    subsets = {"all": np.ones(len(dataset), dtype=bool)} if subsets is None else subsets
    frame = dataset.frame
    for agg, s in scores.items():
        for aspect in dataset.aspects:
            human = dataset.human(aspect)
            what = f"{label} ({agg}) vs human {aspect} on {dataset.name}"
            if "example" in dataset.levels:
                judge_cols = dataset.judges.get(aspect) if judges == "stacked" else None
                for name, mask in subsets.items():
                    mask = np.asarray(mask, dtype=bool)
                    j = frame.loc[mask, judge_cols].to_numpy(dtype=float) if judge_cols else None
                    for c in corr.example_level(s[mask], human[mask], judges=j, what=f"{what}, {name}"):
                        rows.append({**base, "aggregation": agg, "level": "example", "aspect": aspect, "subset": name,
                                     "judges": judges if judge_cols else "mean", "statistic": c.statistic,
                                     "value": c.value, "p_value": c.p_value, "n": c.n})
            if "system" in dataset.levels:
                c = corr.system_level(frame["system_id"], s, human, what)
                rows.append({**base, "aggregation": agg, "level": "system", "aspect": aspect, "subset": "all",
                             "judges": "mean", "statistic": c.statistic, "value": c.value, "p_value": c.p_value,
                             "n": c.n})
    return pd.DataFrame(rows, columns=COLUMNS)


def _subsets(dataset) -> dict | None:
    if isinstance(dataset, PairSet) or "example" not in dataset.levels:
        return None
    single = selection(dataset)["single_gender"].to_numpy()
    out = {"all": np.ones(len(dataset), dtype=bool)}
    if single.sum() >= 3:
        out["single_gender"] = single
    return out


def run(dataset, metrics: Iterable, *, swap: str = "none", cache=None, judges: str = "mean") -> pd.DataFrame:
    """Correlations of every metric on ``dataset`` (original, or gender-swapped with ``swap="gender"``).

    The single-gender subset is chosen on the original hypotheses (male-only),
    so that the swapped run correlates the same examples.
    """
    return _runs(dataset, metrics, swap, cache, (judges,))[judges]


def _runs(dataset, metrics: Iterable, swap: str, cache, modes) -> dict[str, pd.DataFrame]:
    """:func:`run` under each way of using the judges in ``modes``; each metric scores the set once."""
    if swap not in ("none", "gender"):
        raise ValueError(f"swap={swap!r} is not one of ['none', 'gender']")
    for judges in modes:
        _check_judges(judges)
    subsets = _subsets(dataset)
    data = dataset.swapped() if swap == "gender" else dataset
    frames = {judges: [] for judges in modes}
    for m in metrics:
        label, metric = resolve(m)
        scores = _scores(metric, data, cache)
        for judges in modes:
            frames[judges].append(correlations(data, (label, metric), cache=cache, swap=swap, subsets=subsets,
                                               judges=judges, scores=scores))
    return {judges: pd.concat(f, ignore_index=True) for judges, f in frames.items()}


def performance(dataset, metrics: Iterable, *, cache=None, judges: str = "mean") -> pd.DataFrame:
    """Correlations before (``origin``) and after (``swap``) gender swapping, with ``delta`` = swap - origin."""
    return _performances(dataset, metrics, cache, (judges,))


def performance_both_judges(dataset, metrics: Iterable, *, cache=None) -> pd.DataFrame:
    """:func:`performance` under each way of using the judges (:data:`JUDGES`), in one table (``judges`` says which)."""
    return _performances(dataset, metrics, cache, JUDGES)


def _performances(dataset, metrics: Iterable, cache, modes) -> pd.DataFrame:
    """:func:`performance` under each of ``modes``, stacked; the original and the swapped set are scored once."""
    metrics = [resolve(m) for m in metrics]
    before = _runs(dataset, metrics, "none", cache, modes)
    after = _runs(dataset, metrics, "gender", cache, modes)
    keys = ["dataset", "metric", "name", "aggregation", "level", "aspect", "subset", "judges", "statistic"]
    out = []
    for judges in modes:
        merged = before[judges].drop(columns="swap").merge(after[judges].drop(columns=["swap", "signature"]),
                                                           on=keys, suffixes=("_origin", "_swap"))
        merged = merged.rename(columns={"value_origin": "origin", "value_swap": "swap"})
        merged["delta"] = merged["swap"] - merged["origin"]
        out.append(merged[keys + ["origin", "swap", "delta", "p_value_origin", "p_value_swap", "n_origin",
                                  "signature"]])
    return pd.concat(out, ignore_index=True)


def top_k(dataset: JudgedSet, metrics: Iterable, *, aspect: str | None = None, cache=None, ks=None) -> pd.DataFrame:
    """Figure 1: per metric and k, the Spearman on the top-k systems (by human score), original and swapped."""
    aspect = aspect or dataset.aspects[0]
    swapped = dataset.swapped()
    human = dataset.human(aspect)
    rows = []
    for m in metrics:
        label, metric = resolve(m)
        for cond, data in (("origin", dataset), ("swap", swapped)):
            for agg, s in hypothesis_scores(metric, data, cache).items():
                curve = corr.top_k_curve(data.frame["system_id"], s, human, ks)
                rows.append(curve.assign(metric=label, name=metric.name, aggregation=agg, condition=cond))
    return pd.concat(rows, ignore_index=True)[["metric", "name", "aggregation", "condition", "k", "spearman",
                                               "p_value"]]


def preference_tests(pref: pd.DataFrame, *, alpha: float = claims.ALPHA) -> pd.DataFrame:
    """A :func:`preference` table with a two-sided exact sign test per configuration (male higher against female
    higher, ties left out) and its Benjamini–Hochberg adjustment across the configurations of the table
    (:func:`metricbias.bias.claims.sign_tests`): ``p_sign``, ``p_sign_adjusted`` and ``prefers`` ("male",
    "female", or "neither" when the adjusted p is not below ``alpha``)."""
    tests = claims.sign_tests(pref["n_male_higher"], pref["n_female_higher"], alpha=alpha)
    return pref.assign(p_sign=tests["p_value"].to_numpy(), p_sign_adjusted=tests["p_adjusted"].to_numpy(),
                       prefers=tests["favours"].map({"first": "male", "second": "female"}).fillna("neither")
                       .to_numpy())


def for_download(table: pd.DataFrame) -> pd.DataFrame:
    """A table of correlations or tests as a download: every ``p_value*``/``p_sign*`` column stays numeric, p-values
    that underflow (0) are written as the bound :data:`metricbias.bias.claims.P_FLOOR` and a column
    ``<column>_is_upper_bound`` says which (:func:`metricbias.bias.claims.p_bounds`)."""
    columns = [c for c in table.columns if c.startswith(("p_value", "p_sign"))]
    return claims.p_bounds(table, columns)
