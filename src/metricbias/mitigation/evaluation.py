"""Bias and metric quality before and after a debiasing adapter (Sun et al. 2022, Table 5).

Everything is scored through the project's metrics (``metricbias.metrics``:
``bertscore`` or ``regression`` with and without ``adapter=<folder>``), so the
scores are the ones every other chapter computes, cached by signature.

* **bias** (Eq. 2, :mod:`metricbias.bias.pairwise`): every attribute of the
  released datasets and of the built ones. The built ``stereoset_gender`` set
  is left out: StereoSet's gender examples are part of the adapter's training
  data (as in the paper);
* **quality**: WMT19 kk-en relative rankings (DARR Kendall-like tau), REALSumm
  (system-level Spearman with LitePyramid recall), Flickr8k expert judgements
  (Kendall tau, best score over the five references) and STS-B dev (Pearson).

:func:`compare` puts before and after side by side; :func:`target` checks the
done-when criteria of Sun et al.'s claim for our backbone (gender bias cut, quality
kept, no other bias raised); :func:`curve` follows the checkpoints of a run.
Chapter 6 shapes these tables for its page in :mod:`metricbias.book.reproduction.ch6_adapters`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import datasets
from ..datasets.registry import ADAPTER_EXCLUDED
from ..metaeval.quality import QUALITY, load_quality_sets, quality
from ..scoring import score_pairs
from . import training


#: built attributes not used to evaluate adapters, and why
EXCLUDED_BUILT = ADAPTER_EXCLUDED
#: resamples of the paired permutation test of a bias change; a p-value at its floor (no resample as extreme) is
#: a bound, written "p ≤ ..." (:func:`metricbias.bias.claims.permutation_floor`)
CHANGE_TEST_RESAMPLES = 9999
COMPARE_COLUMNS = ["kind", "dataset", "name", "statistic", "n", "before", "after", "change", "relative_change",
                   "p_value", "signature_before", "signature_after"]


def metric_for(adapter=None, *, meta: dict | None = None, device: str = "auto"):
    """The project metric an adapter was trained for, with ``adapter`` attached (None: the original metric)."""
    from .. import metrics

    name, options = metric_spec(meta or training.read_meta(adapter))
    return metrics.get(name, **options, adapter=str(adapter) if adapter else None, device=device)


def metric_spec(meta: dict) -> tuple[str, dict]:
    """Registry name and options of the metric an adapter was trained for (from its metadata), the adapter left out."""
    if meta["metric"] == "bertscore":
        return "bertscore", {"backbone": meta["metric_backbone"], "layer": meta["layer"], "idf": meta["idf"]}
    return "regression", {"backbone": meta["metric_backbone"]}


def shipped_adapter_specs() -> dict[str, tuple[str, dict]]:
    """{adapter name: (registry name, options with the adapter attached by name)} of every trained debiasing
    adapter found (``models/<name>/``, else the cache): a score with it reads the same on any machine."""
    from .. import backbones
    from ..trained.recipes import RECIPES
    from .training import read_meta

    out = {}
    for name, recipe in RECIPES.items():
        folder = backbones.trained_path(name) if recipe[0] == "adapter" and not name.endswith("-smoke") else None
        if folder is not None:
            metric, options = metric_spec(read_meta(folder))
            out[name] = (metric, {**options, "adapter": name})
    return out


# --- bias -------------------------------------------------------------------------------------

def bias_pairs(attributes=None) -> pd.DataFrame:
    """The pairs measured: dataset ``adapter-evaluation`` in the pair layout (``dataset`` says published or built)."""
    return datasets.load("adapter-evaluation", attributes)


def _pair_scores(metric, pairs: pd.DataFrame, cache=None) -> dict:
    """(dataset, attribute) -> (scores of candidate 1, scores of candidate 2, labels naming the set): one scoring call."""
    scored = score_pairs(pairs, metric, cache=cache, label=metric.name)
    s1, s2 = scored["score_1"].to_numpy(), scored["score_2"].to_numpy()
    return {(dataset, attribute): (s1[idx], s2[idx], {"metric": metric.name, "attribute": f"{dataset} {attribute}"})
            for (dataset, attribute), idx in scored.groupby(["dataset", "attribute"], sort=False).indices.items()}


def _bias_rows(scored: dict) -> pd.DataFrame:
    from ..bias.pairwise import absolute_bias, stereotypical_difference

    return pd.DataFrame([{"dataset": dataset, "attribute": attribute, "n_pairs": len(s1),
                          "bias": absolute_bias(s1, s2, **labels),
                          "stereotypical_difference": stereotypical_difference(s1, s2, **labels)}
                         for (dataset, attribute), (s1, s2, labels) in scored.items()])


def _change_tests(before: dict, after: dict, n_resamples: int, seed: int) -> pd.DataFrame:
    from ..bias.pairwise import pair_terms
    from ..bias.significance import paired_permutation_test

    rows = []
    for key, (s1, s2, labels) in before.items():
        a1, a2, a_labels = after[key]
        try:
            p = paired_permutation_test(pair_terms(a1, a2, **a_labels), pair_terms(s1, s2, **labels),
                                        n_resamples=n_resamples, seed=seed)["p_value"]
        except ValueError:  # a constant metric on this set: no test
            p = np.nan
        rows.append({"dataset": key[0], "attribute": key[1], "p_value": p})
    return pd.DataFrame(rows)


def bias(metric, pairs: pd.DataFrame, *, cache=None) -> pd.DataFrame:
    """Eq. 2 bias and stereotypical difference of ``metric`` per (dataset, attribute) of ``pairs``."""
    return _bias_rows(_pair_scores(metric, pairs, cache))


def bias_change_tests(before, after, pairs: pd.DataFrame, *, cache=None, n_resamples: int = CHANGE_TEST_RESAMPLES,
                      seed: int = 0) -> pd.DataFrame:
    """Is the adapter's Eq. 2 bias different from the original's on the same pairs?

    Per (dataset, attribute): the paired permutation test of
    :func:`metricbias.bias.significance.paired_permutation_test` on the per-pair
    terms |Ŝ_1 − Ŝ_2| of the two metrics, each rescaled with its own Eq. 1.
    """
    return _change_tests(_pair_scores(before, pairs, cache), _pair_scores(after, pairs, cache), n_resamples, seed)


# --- before / after ---------------------------------------------------------------------------

def compare(adapter, *, attributes=None, measures=tuple(QUALITY), sample_size: int = 0,
            quality_sample_size: int | None = None, seed: int = 0, cache=None, device: str = "auto") -> pd.DataFrame:
    """Bias and quality of the original metric and of the metric with ``adapter``, side by side.

    ``sample_size``: pairs per attribute (0: all); ``quality_sample_size``: items
    per quality set (default: ``sample_size``). ``relative_change`` is
    ``(after - before) / |before|``; ``p_value`` (bias rows) is the paired
    permutation test of :func:`bias_change_tests`.
    """
    quality_sample_size = sample_size if quality_sample_size is None else quality_sample_size
    meta = training.read_meta(adapter)
    before_m, after_m = metric_for(None, meta=meta, device=device), metric_for(adapter, meta=meta, device=device)
    pairs = datasets.sample(bias_pairs(attributes), sample_size, seed)
    sets = load_quality_sets(measures, quality_sample_size, seed) if measures else {}
    return compare_metrics(before_m, after_m, pairs, sets, seed=seed, cache=cache)


def compare_metrics(before_m, after_m, pairs: pd.DataFrame, sets: dict, *, seed: int = 0, cache=None) -> pd.DataFrame:
    """:func:`compare` for any two metrics (an original and its mitigated form) on given pairs and quality sets."""
    # each metric scores the pairs once: the biases and the test of their change come from the same scores
    scored_before, scored_after = _pair_scores(before_m, pairs, cache), _pair_scores(after_m, pairs, cache)
    tests = _change_tests(scored_before, scored_after, n_resamples=CHANGE_TEST_RESAMPLES, seed=seed)
    p_values = {(d, a): v for d, a, v in zip(tests["dataset"], tests["attribute"], tests["p_value"])}
    rows = []
    merged = _bias_rows(scored_before).merge(_bias_rows(scored_after), on=["dataset", "attribute"],
                                             suffixes=("_before", "_after"))
    for r in merged.to_dict("records"):
        rows.append({"kind": "bias", "dataset": r["dataset"], "name": r["attribute"], "statistic": "bias (Eq. 2)",
                     "n": r["n_pairs_before"], "before": r["bias_before"], "after": r["bias_after"],
                     "p_value": p_values[(r["dataset"], r["attribute"])]})
    if sets:
        merged = quality(before_m, sets, cache=cache).merge(quality(after_m, sets, cache=cache),
                                                             on=["dataset", "statistic"], suffixes=("_before", "_after"))
        for r in merged.to_dict("records"):
            rows.append({"kind": "quality", "dataset": r["dataset"], "name": QUALITY[r["dataset"]],
                         "statistic": r["statistic"], "n": r["n_before"], "before": r["value_before"],
                         "after": r["value_after"], "p_value": np.nan})
    out = pd.DataFrame(rows)
    out["change"] = out["after"] - out["before"]
    out["relative_change"] = out["change"] / out["before"].abs()
    out["signature_before"], out["signature_after"] = before_m.signature, after_m.signature
    return out[COMPARE_COLUMNS]


def target(table: pd.DataFrame, *, gender_cut: float = 0.60, quality_tolerance: float = 0.01,
           other_rise: float = 0.10) -> pd.DataFrame:
    """The done-when criteria of Sun et al.'s claim on a :func:`compare` table: one row per criterion, with ``met``.

    The adapter should cut gender bias by at least ``gender_cut`` on every gender set, lose at most
    ``quality_tolerance`` of every quality measure (relative; a rise keeps it) and raise no other attribute's bias by
    more than ``other_rise`` (relative).

    Each criterion keeps the :func:`compare` row it judges (``dataset, name, n, before, after, p_value``).
    """
    rows = []
    for r in table.to_dict("records"):
        rel = float(r["relative_change"])
        if r["kind"] == "quality":
            # keeping quality means losing at most the tolerance: a rise keeps it too
            crit = (f"quality change on {r['dataset']} ({r['statistic']})", rel, f">= -{quality_tolerance:.0%}",
                    rel >= -quality_tolerance)
        elif r["name"] == "gender":
            crit = (f"gender bias cut on the {r['dataset']} gender set", -rel, f">= {gender_cut:.0%}", -rel >= gender_cut)
        else:
            crit = (f"bias change on {r['dataset']} {r['name']}", rel, f"<= +{other_rise:.0%}", rel <= other_rise)
        rows.append(dict(zip(("criterion", "value", "threshold", "met"), crit), kind=r["kind"], dataset=r["dataset"],
                         name=r["name"], n=r["n"], before=r["before"], after=r["after"],
                         p_value=r.get("p_value", np.nan)))
    order = {"gender": 0, "quality": 1, "bias": 2}  # gender criteria first, then quality, then the other attributes
    out = pd.DataFrame(rows)
    return out.sort_values("criterion", key=lambda c: c.str.split().str[0].map(order), kind="stable",
                           ignore_index=True)


def curve(run_dir, *, attributes=("gender",), measures=("stsb-dev",), sample_size: int = 0,
          seed: int = 0, cache=None, device: str = "auto") -> pd.DataFrame:
    """Gender bias and quality at every checkpoint of a training run (step 0: the original metric)."""
    run_dir = Path(run_dir)
    meta = training.read_meta(run_dir)
    pairs = datasets.sample(bias_pairs(attributes), sample_size, seed)
    sets = load_quality_sets(measures, sample_size, seed) if measures else {}
    points = [(0, None)] + training.checkpoints(run_dir)
    rows = []
    for step, folder in points:
        m = metric_for(folder, meta=meta, device=device)
        for r in bias(m, pairs, cache=cache).to_dict("records"):
            rows.append({"step": step, "kind": "bias", "dataset": r["dataset"], "name": r["attribute"],
                         "value": r["bias"]})
        for r in (quality(m, sets, cache=cache).to_dict("records") if sets else []):
            rows.append({"step": step, "kind": "quality", "dataset": r["dataset"], "name": r["statistic"],
                         "value": r["value"]})
    out = pd.DataFrame(rows)
    base = out[out["step"] == 0].set_index(["kind", "dataset", "name"])["value"]
    out["relative_change"] = [(v - base[(k, d, n)]) / abs(base[(k, d, n)]) for k, d, n, v in
                              zip(out["kind"], out["dataset"], out["name"], out["value"])]
    return out


def held_out_texts() -> set[str]:
    """Every text of the evaluation sets (bias pairs and quality sets): CDA training leaves them out."""
    pairs = bias_pairs()
    texts = set(pairs["candidate_1"]) | set(pairs["candidate_2"]) | set(pairs["reference_1"]) | set(pairs["reference_2"])
    for name, data in load_quality_sets().items():
        frame = data if name == "stsb-dev" else data.frame
        for col in ("sentence1", "sentence2", "hypothesis", "reference", "better", "worse"):
            if col in frame:
                texts.update(frame[col])
        if "references" in frame:
            texts.update(r for refs in frame["references"] for r in refs)
    return texts


def evaluate(adapter, out=None, **kwargs) -> pd.DataFrame:
    """:func:`compare`, written atomically to ``out`` (CSV) when given."""
    from ..paths import write_csv_atomic

    table = compare(adapter, **kwargs)
    if out is not None:
        write_csv_atomic(table, out)
    return table


__all__ = ["CHANGE_TEST_RESAMPLES", "COMPARE_COLUMNS", "EXCLUDED_BUILT", "QUALITY", "bias", "bias_change_tests",
           "bias_pairs", "compare", "compare_metrics", "curve", "evaluate", "held_out_texts", "load_quality_sets",
           "metric_for", "quality", "shipped_adapter_specs", "target"]
