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
kept, no other bias raised); :func:`curve` follows the checkpoints of a run. The
functions after :func:`evaluate` shape these tables for chapter 6 and give its
headline numbers (:func:`findings`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import datasets
from ..datasets.registry import ADAPTER_EXCLUDED
from ..metaeval.quality import QUALITY, load_quality_sets, quality
from ..scoring import score_pairs
from ..signature import configuration
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

    meta = meta or training.read_meta(adapter)
    if meta["metric"] == "bertscore":
        return metrics.get("bertscore", backbone=meta["metric_backbone"], layer=meta["layer"], idf=meta["idf"],
                           adapter=str(adapter) if adapter else None, device=device)
    return metrics.get("regression", backbone=meta["metric_backbone"], adapter=str(adapter) if adapter else None,
                       device=device)


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

    The adapter should cut gender bias by at least ``gender_cut`` on every gender set, keep every
    quality measure within ``quality_tolerance`` (relative) and raise no other attribute's bias by
    more than ``other_rise`` (relative).

    Each criterion keeps the :func:`compare` row it judges (``dataset, name, n, before, after, p_value``).
    """
    rows = []
    for r in table.to_dict("records"):
        rel = float(r["relative_change"])
        if r["kind"] == "quality":
            crit = (f"quality change on {r['dataset']} ({r['statistic']})", rel, f"|change| <= {quality_tolerance:.0%}",
                    abs(rel) <= quality_tolerance)
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


# --- what chapter 6 shows: tables and findings from the tables above ---------------------------

#: readable column names for the tables chapter 6 shows (CDA counts, criteria, signatures)
PAGE_NAMES = {"pairs_read": "pairs read", "dropped_held_out": "dropped (held out)", "pairs_used": "pairs used",
              "gendered_sentences": "gendered sentences", "debias_triples": "counterfactual triples",
              "kd_pairs": "distillation pairs", "p_value": "p", "signature_before": "without the adapter",
              "signature_after": "with the adapter"}


def evaluated_attributes(attributes=None) -> list[str] | None:
    """The attributes an adapter evaluation measures for a selection (a list, a comma-separated string or None
    for all): gender, the attribute the adapters debias, is always among them."""
    if isinstance(attributes, str):
        attributes = [a.strip() for a in attributes.split(",") if a.strip()]
    if attributes is None:
        return None
    return list(dict.fromkeys(["gender", *attributes]))


def training_data_summary(data, held_out=()) -> dict:
    """Sizes of the CDA training data: ``triples``, ``kd_pairs``, ``examples`` (both), ``share_of_paper``
    (of Sun et al.'s ~800k examples) and ``held_out_texts`` (evaluation texts kept out of training)."""
    n = len(data.debias) + len(data.kd)
    return {"triples": len(data.debias), "kd_pairs": len(data.kd), "examples": n,
            "share_of_paper": n / training.PAPER_EXAMPLES, "held_out_texts": len(held_out)}


def triples_by_source(data) -> pd.DataFrame:
    """Counterfactual triples per source: ``source, pair, self`` (the two ways a triple takes its reference)."""
    counts = data.debias.groupby(["source", "kind"]).size().unstack("kind", fill_value=0)
    return counts.reindex(columns=["pair", "self"], fill_value=0).reset_index().rename_axis(columns=None)


def example_triples(data, n: int = 6, seed: int = 0) -> pd.DataFrame:
    """``n`` counterfactual triples drawn with ``seed``: ``source, kind, c1, c2, r``."""
    return data.debias.sample(n, random_state=seed)[["source", "kind", "c1", "c2", "r"]].reset_index(drop=True)


#: the configuration of Sun et al.'s Table 7 each of our metrics stands for
PAPER_MODELS = {"bertscore": "BERTScore-base", "regression": "BLEURT-base"}


def hyperparameters(n_examples: int) -> pd.DataFrame:
    """Table 7 of Sun et al. beside our defaults for a training set of ``n_examples`` (same batch, same epochs)."""
    rows = []
    for metric, model in PAPER_MODELS.items():
        paper, ours = training.PAPER_HPARAMS[metric], training.DEFAULTS[metric]
        steps = training.default_steps(metric, n_examples, ours["batch_size"])
        rows.append({"metric": metric, "model (paper)": model, "learning rate (paper)": paper["lr"],
                     "batch (paper)": paper["batch_size"], "steps (paper)": paper["steps"],
                     "epochs (paper)": training.paper_epochs(metric), "learning rate": ours["lr"],
                     "batch": ours["batch_size"], "steps": steps, "epochs": steps * ours["batch_size"] / n_examples})
    return pd.DataFrame(rows)


def adapter_summary(adapters: dict, n_examples: int | None = None) -> pd.DataFrame:
    """How each adapter was trained, read from its own metadata (:func:`training.read_meta`).

    ``adapters`` maps a label to an adapter folder. ``default steps`` (when
    ``n_examples`` is given) is what :func:`hyperparameters` gives the training
    set of that size, and ``share of default`` how much of it the adapter ran.
    """
    rows = []
    for label, folder in adapters.items():
        meta = training.read_meta(folder)
        tc = meta["train_config"]
        row = {"metric": label, "backbone": meta["metric_backbone"], "steps": meta["steps_done"],
               "batch": tc["batch_size"], "learning rate": tc["lr"], "device": tc["device"],
               "seconds per step": meta["seconds_per_step"],
               "triples": sum(meta[k]["debias"] for k in ("train_examples", "validation_examples")),
               "pairs": sum(meta[k]["kd"] for k in ("train_examples", "validation_examples")),
               "adapter parameters": meta["trainable_parameters"], "layers": meta["num_layers_with_adapter"]}
        if n_examples:
            row["default steps"] = training.default_steps(meta["metric"], n_examples, tc["batch_size"])
            row["share of default"] = row["steps"] / row["default steps"]
        rows.append(row)
    return pd.DataFrame(rows)


def training_logs(adapters: dict) -> pd.DataFrame:
    """The training logs of the adapters, long form: ``metric, step, split, loss, value`` (debiasing, distillation)."""
    frames = []
    for label, folder in adapters.items():
        log = pd.read_csv(Path(folder) / "log.csv")
        long = log.melt(id_vars=["step", "split"], value_vars=["debias_loss", "kd_loss"], var_name="loss",
                        value_name="value")
        long["loss"] = long["loss"].map({"debias_loss": "debiasing (Eq. 4)", "kd_loss": "distillation (Eq. 5)"})
        frames.append(long.assign(metric=label))
    return pd.concat(frames, ignore_index=True)[["metric", "step", "split", "loss", "value"]]


def compare_all(adapters: dict, **kwargs) -> pd.DataFrame:
    """:func:`compare` for every adapter of ``adapters`` (label -> folder), one long table with ``metric`` (the label)
    and ``backbone`` in front."""
    frames = []
    for label, folder in adapters.items():
        table = compare(folder, **kwargs)
        frames.append(table.assign(metric=label, backbone=training.read_meta(folder)["metric_backbone"]))
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", "backbone", *COMPARE_COLUMNS]]


def criteria(results: pd.DataFrame, **thresholds) -> pd.DataFrame:
    """:func:`target` for every metric of a :func:`compare_all` table, with ``metric`` in front."""
    frames = [target(group, **thresholds).assign(metric=label)
              for label, group in results.groupby("metric", sort=False)]
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", *[c for c in out.columns if c != "metric"]]]


def criteria_summary(checks: pd.DataFrame) -> pd.DataFrame:
    """Per metric, from a :func:`criteria` table: criteria met, the gender bias cut on each gender set, the largest
    quality change (relative, signed) and the largest rise of another attribute's bias, with the set it is on."""
    rows = []
    for label, c in checks.groupby("metric", sort=False):
        row = {"metric": label, "criteria met": int(c["met"].sum()), "criteria": len(c)}
        for r in c[c["criterion"].str.startswith("gender bias cut")].itertuples():
            row[f"gender bias cut ({r.dataset})"] = r.value
        quality = c[c["kind"] == "quality"]
        if len(quality):
            row["largest quality change"] = quality["value"].loc[quality["value"].abs().idxmax()]
        other = c[(c["kind"] == "bias") & ~c["criterion"].str.startswith("gender bias cut")]
        if len(other):
            top = other.loc[other["value"].idxmax()]
            row["largest rise of another bias"] = top["value"]
            row["on"] = f"{top['dataset']} {top['name']}"
        rows.append(row)
    return pd.DataFrame(rows)


def missed(checks: pd.DataFrame) -> pd.DataFrame:
    """The criteria a :func:`criteria` table does not meet, with what they judge (``before``, ``after``, ``n``) and
    the paired permutation p-value of a bias change (NaN for quality: no test)."""
    cols = ["metric", "criterion", "value", "threshold", "before", "after", "n", "p_value"]
    return checks.loc[~checks["met"], cols].reset_index(drop=True)


def bias_changes(results: pd.DataFrame) -> pd.DataFrame:
    """The bias rows of a :func:`compare_all` table with ``set`` = "<dataset> <attribute>" (for a figure)."""
    rows = results[results["kind"] == "bias"].reset_index(drop=True)
    return rows.assign(set=rows["dataset"] + " " + rows["name"])


def curve_series(points: pd.DataFrame) -> pd.DataFrame:
    """A :func:`curve` table with ``series`` = "<kind>: <dataset> <name>" (one line of a figure each)."""
    return points.assign(series=points["kind"] + ": " + points["dataset"] + " " + points["name"])


def trade_off(points: pd.DataFrame) -> pd.DataFrame:
    """Per checkpoint of a :func:`curve` table: ``gender_bias_cut`` (the mean cut over the gender sets) and
    ``quality_change`` (relative change of the quality measure; the first one if there are several)."""
    bias = points[points["kind"] == "bias"].groupby("step", sort=True)["relative_change"].mean()
    quality = points[points["kind"] == "quality"]
    first = quality[["dataset", "name"]].drop_duplicates().iloc[0]
    quality = quality[(quality["dataset"] == first["dataset"]) & (quality["name"] == first["name"])]
    return pd.DataFrame({"step": bias.index, "gender_bias_cut": -bias.to_numpy(),
                         "quality_change": quality.set_index("step")["relative_change"].reindex(bias.index).to_numpy()})


def example_pair(attribute: str = "gender", index: int = 0) -> dict:
    """One pair of the released dataset of ``attribute``: ``candidate_1, candidate_2, reference``."""
    pair = datasets.load("published", [attribute]).iloc[index]
    return {"candidate_1": pair["candidate_1"], "candidate_2": pair["candidate_2"], "reference": pair["reference_1"]}


def matching_maps(adapter, pair: dict, *, device: str = "auto") -> dict:
    """BERTScore's matching maps of both candidates of ``pair`` against its reference, without and with ``adapter``.

    Returns ``{"maps": {(variant, candidate): MatchingMap}, "gap_original": ..., "gap_adapter": ...}``; variant
    is ``original`` or ``adapter``, candidate ``candidate_1`` or ``candidate_2``; a gap is the F score of
    candidate 1 minus that of candidate 2.
    """
    meta = training.read_meta(adapter)
    if meta["metric"] != "bertscore":
        raise ValueError(f"{adapter}: matching maps need a BERTScore adapter, not one for {meta['metric']!r}")
    variants = {"original": metric_for(None, meta=meta, device=device),
                "adapter": metric_for(adapter, meta=meta, device=device)}
    maps, scores = {}, {}
    for variant, metric in variants.items():
        for cand in ("candidate_1", "candidate_2"):
            maps[(variant, cand)] = metric.matching_map(pair[cand], pair["reference"])
            scores[(variant, cand)] = float(metric.score([pair[cand]], [pair["reference"]])[0])
    return {"maps": maps, **{f"gap_{v}": scores[(v, "candidate_1")] - scores[(v, "candidate_2")] for v in variants}}


# --- the shipped adapters chapter 6 reads (trains nothing) -----------------------------------

def shipped_adapters(wanted: dict) -> dict:
    """The trained adapters of ``wanted`` (label -> (metric, backbone)) found by name: label -> :class:`training.Shipped`.

    Trains nothing: a missing adapter is one error naming every missing one and the command that trains it.
    """
    found, missing = {}, []
    for label, (metric, backbone) in wanted.items():
        try:
            found[label] = training.shipped(metric, backbone)
        except FileNotFoundError as exc:
            missing.append(str(exc))
    if missing:
        raise FileNotFoundError("; ".join(missing))
    return found


def _where(folder: Path) -> str:
    """Where an adapter was found, without the machine's paths: ``models/NAME`` or ``cache: trained/NAME``."""
    folder = Path(folder)
    return f"{folder.parent.name}/{folder.name}" if folder.parent.name == "models" else f"cache: trained/{folder.name}"


def retrain_commands(found) -> list[str]:
    """The commands that retrain a shipped adapter with the configuration its provenance records, record its
    figures (before/after table and checkpoint curve) and ship it under ``models/``."""
    p, run = found.provenance, f"runs/{found.name}"
    train = (f"metricbias adapters train --metric {p['metric']} --backbone {p['metric_backbone']} "
             f"--steps {p['steps']} --batch-size {p['batch_size']} --lr {p['lr']:g} --seed {p['seed']} --out {run}")
    return [train, f"metricbias adapters evaluate --adapter {run} --out {run}.csv --record",
            f"metricbias adapters ship --run {run}"]


def shipped_summary(adapters: dict) -> pd.DataFrame:
    """One row per shipped adapter (label -> :class:`training.Shipped`): which artifact, where it was found, and from
    its provenance the device it was trained on, the wall-clock minutes, and whether its figures were recorded
    (steps, batch, learning rate and seconds per step: :func:`adapter_summary`)."""
    rows = []
    for label, found in adapters.items():
        p = found.provenance
        rows.append({"metric": label, "artifact": found.name, "found in": _where(found.folder),
                     "trained on": p.get("device_name", p["device"]), "minutes": p["seconds_total"] / 60,
                     "figures recorded": "yes" if p.get("figures") else "no"})
    return pd.DataFrame(rows)


def recorded_results(adapters: dict, attributes=None) -> pd.DataFrame:
    """The before/after tables recorded with the adapters (``metricbias adapters evaluate --record``), in the layout
    of :func:`compare_all`, restricted to ``attributes`` (:func:`evaluated_attributes`: gender always)."""
    keep = evaluated_attributes(attributes)
    frames = []
    for label, found in adapters.items():
        table = found.evaluation()
        if table.empty:
            raise ValueError(f"{_where(found.folder)}: no figures recorded; run `{retrain_commands(found)[1]}`")
        if keep is not None:
            table = table[(table["kind"] != "bias") | table["name"].isin(keep)]
        frames.append(table.assign(metric=label, backbone=found.meta["metric_backbone"]))
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", "backbone", *COMPARE_COLUMNS]]


def adapter_results(adapters: dict, *, attributes=None, sample_size: int = 0, quality_sample_size: int = 0,
                    seed: int = 0, cache=None, device: str = "auto") -> tuple[pd.DataFrame, str]:
    """The before/after table of the shipped adapters, and where it comes from (``"recorded"`` or ``"computed"``).

    On the full sets (``sample_size`` and ``quality_sample_size`` 0), the figures recorded with each adapter
    (:func:`recorded_results`) when every adapter has them and they were computed with the metric configured as
    it is now (:func:`same_configuration`); otherwise :func:`compare_all` computes them here on the samples asked for.
    """
    if not sample_size and not quality_sample_size and all(not a.evaluation().empty for a in adapters.values()):
        recorded = recorded_results(adapters, attributes)
        current = {label: (metric_for(None, meta=a.meta).signature, metric_for(a.folder, meta=a.meta).signature)
                   for label, a in adapters.items()}
        if all(same_configuration(g, current[label]) for label, g in recorded.groupby("metric", sort=False)):
            return recorded, "recorded"
    folders = {label: a.folder for label, a in adapters.items()}
    return compare_all(folders, attributes=evaluated_attributes(attributes), sample_size=sample_size,
                       quality_sample_size=quality_sample_size, seed=seed, cache=cache, device=device), "computed"


def same_configuration(recorded: pd.DataFrame, current: tuple[str, str]) -> bool:
    """Whether a recorded before/after table (``signature_before``/``_after`` columns) is of the metric without
    and with the adapter as configured now: the same signatures but for library versions (the figures of an
    adapter trained and evaluated on a GPU machine hold there, with its torch build)."""
    pairs = set(zip(recorded["signature_before"].map(configuration), recorded["signature_after"].map(configuration)))
    return pairs == {tuple(configuration(s) for s in current)}


def results_note(source: str, results: pd.DataFrame) -> str:
    """A sentence (Markdown) saying where an :func:`adapter_results` table comes from and on how many examples."""
    bias_rows, quality_rows = results[results["kind"] == "bias"], results[results["kind"] == "quality"]
    sizes = (f"{int(bias_rows['n'].sum()):,} bias pairs over {len(bias_rows)} (metric, set) cells and "
             f"{int(quality_rows['n'].sum()):,} quality items")
    if source == "recorded":
        return (f"These figures were recorded with each adapter when it was shipped (`metricbias adapters evaluate "
                f"--record`, kept in its `provenance.json`, for the same metric configurations as here; the signatures "
                f"name the library versions they were computed with): {sizes}. "
                "The chapter reads them instead of scoring again.")
    return f"These figures are computed here, on samples of the evaluation sets: {sizes}."


def findings(results: pd.DataFrame, **thresholds) -> dict:
    """Chapter 6's headline numbers from a :func:`compare_all` table (e.g. the chapter's download of it).

    Per adapter (key prefix: the metric label in lower case): ``gender_bias_cut_<dataset>`` on each gender
    set with ``gender_bias_p_<dataset>`` (its paired permutation test, as text: "p = 0.002"), ``criteria_met`` of
    ``criteria``, and ``largest_quality_change`` (relative, signed).
    """
    from ..bias.claims import format_p, permutation_floor

    floor = permutation_floor(CHANGE_TEST_RESAMPLES)
    out = {}
    checks = criteria(results, **thresholds)
    for r in checks[checks["criterion"].str.startswith("gender bias cut")].itertuples():
        # the paired permutation p-value of the bias change, as the page writes it (a bound at the test's floor)
        out[f"{r.metric.lower().replace(' ', '_')}_gender_bias_p_{r.dataset}"] = format_p(r.p_value, resolution=floor)
    for row in criteria_summary(checks).to_dict("records"):
        key = row["metric"].lower().replace(" ", "_")
        for col, value in row.items():
            if col.startswith("gender bias cut ("):
                out[f"{key}_gender_bias_cut_{col[len('gender bias cut ('):-1]}"] = float(value)
        out[f"{key}_criteria_met"], out[f"{key}_criteria"] = row["criteria met"], row["criteria"]
        if "largest quality change" in row:
            out[f"{key}_largest_quality_change"] = float(row["largest quality change"])
    return out


# --- the training-free alternative: the metric made blind to the attribute (mitigation.invariant) ---------

def invariant_results(adapters: dict, labels=None, *, attribute: str = "gender", attributes=None,
                      sample_size: int = 0, quality_sample_size: int = 0, seed: int = 0, cache=None,
                      device: str = "auto") -> pd.DataFrame:
    """:func:`compare_all`'s table for the invariant wrapper (:func:`metricbias.mitigation.invariant.invariant`)
    of the metrics the shipped ``adapters`` were trained for, in place of the adapters: ``before`` is the plain
    metric, ``after`` the wrapper blind to ``attribute``, on the same samples (``labels``: which adapters' metrics;
    default all). The ``metric`` column reads "<label> (<attribute>-invariant)"."""
    from .invariant import invariant

    pairs = datasets.sample(bias_pairs(evaluated_attributes(attributes)), sample_size, seed)
    sets = load_quality_sets(tuple(QUALITY), quality_sample_size, seed)
    frames = []
    for label in (labels or list(adapters)):
        meta = adapters[label].meta
        plain = metric_for(None, meta=meta, device=device)
        table = compare_metrics(plain, invariant(plain, attribute), pairs, sets, seed=seed, cache=cache)
        frames.append(table.assign(metric=f"{label} ({attribute}-invariant)", backbone=meta["metric_backbone"]))
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", "backbone", *COMPARE_COLUMNS]]


def _scored_pairs(sets: dict) -> dict[str, tuple[list[str], list[str]]]:
    """Set name -> the (candidates, references) a metric scores on it (every reference of a multi-reference item)."""
    out = {}
    for name, data in sets.items():
        if name == "stsb-dev":
            out[name] = (list(data["sentence2"]), list(data["sentence1"]))
            continue
        f = data.frame
        if "better" in f:  # DARR: both translations against the reference
            out[name] = (list(f["better"]) + list(f["worse"]), list(f["reference"]) * 2)
        else:
            out[name] = ([h for h, refs in zip(f["hypothesis"], f["references"]) for _ in refs],
                         [r for refs in f["references"] for r in refs])
    return out


def invariant_cost(*, attribute: str = "gender", attributes=None, sample_size: int = 0, quality_sample_size: int = 0,
                   seed: int = 0) -> pd.DataFrame:
    """Forward passes of the invariant wrapper relative to the plain metric, per evaluation set (the samples of
    :func:`invariant_results`): ``texts`` (distinct texts an encoder runs, as BERTScore does) and ``pairs``
    (distinct candidate-reference pairs, as the regression metric reads them), and ``all`` sets pooled."""
    from .invariant import cost

    pairs = datasets.sample(bias_pairs(evaluated_attributes(attributes)), sample_size, seed)
    scored = {"bias pairs": (list(pairs["candidate_1"]) + list(pairs["candidate_2"]),
                             list(pairs["reference_1"]) + list(pairs["reference_2"]))}
    scored.update(_scored_pairs(load_quality_sets(tuple(QUALITY), quality_sample_size, seed)))
    scored["all"] = tuple(sum((list(v[i]) for v in scored.values()), []) for i in (0, 1))
    return pd.DataFrame([{"set": name, "scored pairs": len(c), **cost(c, r, attribute)}
                         for name, (c, r) in scored.items()])


def bias_intervals(results: pd.DataFrame, adapters: dict, *, name: str = "gender", attribute: str = "gender",
                   sample_size: int = 0, seed: int = 0, n_resamples: int = 9999, cache=None,
                   device: str = "auto") -> pd.DataFrame:
    """Eq. 2 bias with 95% bootstrap intervals on the ``name`` sets, for each invariant wrapper of an
    :func:`invariant_results` table and its plain metric (scores from the cache those results filled)."""
    from ..bias import measures
    from .invariant import invariant

    pairs = datasets.sample(bias_pairs([name]), sample_size, seed)
    frames = []
    for label in adapters:
        if f"{label} ({attribute}-invariant)" not in set(results["metric"]):
            continue
        plain = metric_for(None, meta=adapters[label].meta, device=device)
        for variant, metric in (("plain", plain), (f"{attribute}-invariant", invariant(plain, attribute))):
            table = measures.measure(score_pairs(pairs, metric, cache=cache, label=label), ["bias"],
                                     n_resamples=n_resamples, seed=seed)
            frames.append(table.assign(variant=variant))
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", "variant", "dataset", "attribute", "n_pairs", "value", "ci_low", "ci_high"]]


def invariant_comparison(adapter_table: pd.DataFrame, invariant_table: pd.DataFrame) -> pd.DataFrame:
    """:func:`criteria_summary` of the trained adapters and the invariant wrappers side by side, each row saying
    which mitigation it is and on how many bias pairs and quality items it was measured."""
    both = pd.concat([adapter_table.assign(mitigation="adapter (trained)"),
                      invariant_table.assign(mitigation="invariant wrapper (no training)")], ignore_index=True)
    summary = criteria_summary(criteria(both.drop(columns="mitigation")))
    per = both.groupby("metric", sort=False)
    summary.insert(1, "mitigation", summary["metric"].map(per["mitigation"].first()))
    summary["bias pairs"] = summary["metric"].map(both[both["kind"] == "bias"].groupby("metric")["n"].sum())
    quality = both[both["kind"] == "quality"].groupby("metric")
    summary["quality items"] = summary["metric"].map(quality["n"].sum())
    # a gain in quality is no cost: the largest relative loss (0 when every quality measure held or rose)
    summary["largest quality loss"] = summary["metric"].map(quality["relative_change"].min().clip(upper=0))
    return summary


def invariant_verdict(comparison: pd.DataFrame, intervals: pd.DataFrame, costs: pd.DataFrame, label: str = "BERTScore",
                      attribute: str = "gender") -> str:
    """A Markdown paragraph: is the training-free wrapper of ``label`` as good as its trained adapter?

    "As good" is judged on the :func:`invariant_comparison` row of each: a gender bias cut at least the
    adapter's on both gender sets, a largest relative quality loss no larger (a gain counts as no loss), and as
    many criteria met (where a quality change of either sign beyond 1% misses its criterion). The wrapper's bias on the
    released gender set is given with its 95% bootstrap interval (:func:`bias_intervals`), its cost with
    :func:`invariant_cost` (all sets pooled).
    """
    rows = comparison.set_index("metric")
    wrapper, adapter = rows.loc[f"{label} ({attribute}-invariant)"], rows.loc[label]
    cut = {d: (wrapper[f"gender bias cut ({d})"], adapter[f"gender bias cut ({d})"]) for d in ("published", "built")}
    q_w, q_a = wrapper["largest quality loss"], adapter["largest quality loss"]
    released = intervals[(intervals["metric"] == label) & (intervals["dataset"] == "published")].set_index("variant")
    plain, blind = released.loc["plain"], released.loc[f"{attribute}-invariant"]
    pooled = costs.set_index("set").loc["all"]
    text = (f"On the released {attribute} set the wrapper's bias (Eq. 2) is {blind['value']:.2f} (95% CI "
            f"{blind['ci_low']:.2f} to {blind['ci_high']:.2f}, {int(blind['n_pairs'])} pairs), against "
            f"{plain['value']:.2f} ({plain['ci_low']:.2f} to {plain['ci_high']:.2f}) for plain {label}. "
            f"It cuts {attribute} bias by {cut['published'][0]:.0%} (released) and {cut['built'][0]:.0%} (built); "
            f"the trained adapter by {cut['published'][1]:.0%} and {cut['built'][1]:.0%}. Its largest quality "
            f"loss is {abs(q_w):.2%}, the adapter's {abs(q_a):.2%}; it meets {wrapper['criteria met']} of "
            f"{wrapper['criteria']} criteria, the adapter {adapter['criteria met']} of {adapter['criteria']} (the wrapper "
            f"measured on {int(wrapper['bias pairs']):,} bias pairs and {int(wrapper['quality items']):,} quality items, "
            f"the adapter on {int(adapter['bias pairs']):,} and {int(adapter['quality items']):,}). ")
    lost = [f"the {attribute} bias cut on the {d} set" for d, (w, a) in cut.items() if not w >= a]
    if not q_w >= q_a:
        lost.append("the largest quality loss")
    if wrapper["criteria met"] < adapter["criteria met"]:
        lost.append("the number of criteria met")
    cost = f"{pooled['texts']:.1f}× the encoder passes (distinct texts) and {pooled['pairs']:.1f}× the scored pairs"
    untested = ("(point values, on samples that need not be the same: no test of the difference, so this is a "
                "comparison of figures, not a finding that one mitigation is better)")
    if lost:
        return text + f"On these sets the wrapper's point values fall short of the adapter's on {' and '.join(lost)} " \
                      f"{untested}; it costs {cost} of the plain metric, and no training."
    return text + (f"On these sets the wrapper's point values reach at least the adapter's on all three (bias cuts, "
                   f"quality loss, criteria met) {untested}, for {cost} of the plain metric and no training.")


__all__ = ["CHANGE_TEST_RESAMPLES", "COMPARE_COLUMNS", "EXCLUDED_BUILT", "PAGE_NAMES", "PAPER_MODELS", "QUALITY", "adapter_results", "adapter_summary",
           "bias", "bias_intervals",
           "bias_change_tests", "bias_changes", "bias_pairs", "compare", "compare_all", "compare_metrics", "criteria", "criteria_summary",
           "curve", "curve_series", "evaluate", "evaluated_attributes", "example_pair", "example_triples", "findings",
           "held_out_texts", "invariant_comparison", "invariant_cost", "invariant_results", "invariant_verdict",
           "hyperparameters", "load_quality_sets", "matching_maps", "metric_for", "missed", "quality", "recorded_results", "results_note",
           "retrain_commands", "same_configuration", "shipped_adapters", "shipped_summary", "target", "trade_off", "training_data_summary", "training_logs", "triples_by_source"]
