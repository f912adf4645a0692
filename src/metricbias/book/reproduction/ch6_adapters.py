"""Chapter 6: the shipped debiasing adapters (found by name; nothing is trained here), their training data
and runs, the before/after tables of :mod:`metricbias.mitigation.evaluation` shaped for the page, and the
chapter's headline numbers (:func:`findings`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ... import datasets
from ...mitigation import training
from ...mitigation.evaluation import CHANGE_TEST_RESAMPLES, COMPARE_COLUMNS, compare, metric_for, target
from ...scoring import score_texts
from ...signature import configuration
from .names import registry_name


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


#: the configuration of Sun et al.'s Table 7 each of our metrics stands for (their base models)
PAPER_MODELS = {registry_name(model.split("-")[0]): model for model in ("BERTScore-base", "BLEURT-base")}


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


#: what a criterion's test says of it: met, missed, left undecided by its test, or without a test
MET, MISSED, UNDECIDED, NOT_TESTED = "met", "missed", "not distinguishable", "not tested"
#: the non-inferiority verdicts of :mod:`.ch6_quality` as criterion statuses
QUALITY_STATUS = {"holds": MET, "reverses": MISSED}
#: what the status of the other-attribute criterion says of a rise, as the page reads it
RISE_WORDS = {MET: "within 10% by its interval: the criterion is met",
              MISSED: "above 10% by its interval: the criterion is missed",
              UNDECIDED: "not distinguishable from 10% by its interval", NOT_TESTED: "without a test"}


#: the page's word for a gender set of the adapter evaluation
GENDER_SETS = {"published": "released", "built": "built"}
#: the gender cut of the chapter's main criterion (the 50% and 70% cuts are its sensitivity)
GENDER_CUT = 0.60
OTHER_RISE = 0.10  #: the largest rise of another attribute's bias the third criterion allows (relative)


def criteria(results: pd.DataFrame, quality: dict | None = None, cuts: pd.DataFrame | None = None,
             changes: pd.DataFrame | None = None, *, alpha: float = 0.05, **thresholds) -> pd.DataFrame:
    """:func:`target` for every metric of a :func:`compare_all` table, with ``metric`` in front, the
    Benjamini–Hochberg adjusted p-value ``q_value`` of each other attribute's bias change (the family: every other
    attribute's change of the table, all metrics together) and the criterion's ``status`` (``met`` is status "met"):

    * a quality criterion takes its non-inferiority verdict (``quality``: (metric, dataset) -> "holds", "reverses"
      or another word, :func:`metricbias.book.reproduction.ch6_quality.verdicts`): met, missed or not
      distinguishable; a quality set without a verdict is "not tested", never missed;
    * the gender cut is decided by its 95% interval (``cuts``: rows ``metric``, ``gender set`` (released, built),
      ``ci_low``, ``ci_high``, :func:`metricbias.book.reproduction.ch6_paper.cut_intervals`): met when the lower end
      reaches the threshold, missed when the upper end lies below it, not distinguishable otherwise; "not tested"
      without an interval (the interval is kept as ``ci_low``, ``ci_high``);
    * another attribute's bias by the 95% interval of its relative change (``changes``: rows ``metric``, ``dataset``,
      ``attribute``, ``ci_low``, ``ci_high``, :func:`.ch6_paper.change_intervals`): met when the upper end is at or
      below the threshold, missed when the lower end is above it, not distinguishable otherwise; without an interval,
      by its point value and q (met at or below the threshold, missed above it with q below ``alpha``);
    * a bias cell without a test (a constant metric) is "not tested".
    """
    from ...bias.claims import bh_adjust

    thresholds = {"gender_cut": GENDER_CUT, **thresholds}
    frames = [target(group, **thresholds).assign(metric=label)
              for label, group in results.groupby("metric", sort=False)]
    # target's point judgement ("met") becomes ``passes``; ``met`` is the tested status below
    out = pd.concat(frames, ignore_index=True).rename(columns={"met": "passes"})
    gender = out["criterion"].str.startswith("gender bias cut")
    other = (out["kind"] == "bias") & ~gender
    out["q_value"] = float("nan")
    out.loc[other, "q_value"] = bh_adjust(out.loc[other, "p_value"])
    intervals = {} if cuts is None else {
        (r["metric"], {v: k for k, v in GENDER_SETS.items()}.get(r["gender set"], r["gender set"])):
            (r["ci_low"], r["ci_high"]) for r in cuts.to_dict("records")}
    if changes is not None:
        intervals.update({(r["metric"], r["dataset"], r["attribute"]): (r["ci_low"], r["ci_high"])
                          for r in changes.to_dict("records")})
    out["ci_low"], out["ci_high"] = zip(*[intervals.get((m, d) if g else (m, d, a), (float("nan"),) * 2)
                                          for m, d, a, g in zip(out["metric"], out["dataset"], out["name"], gender)])
    out["status"] = [_status(r, (quality or {}).get((r["metric"], r["dataset"])), alpha, thresholds["gender_cut"],
                             thresholds.get("other_rise", OTHER_RISE)) for r in out.to_dict("records")]
    out["met"] = out["status"] == MET
    return out[["metric", *[c for c in out.columns if c != "metric"]]]


def _status(row: dict, verdict: str | None, alpha: float, gender_cut: float, other_rise: float) -> str:
    if row["kind"] == "quality":
        return NOT_TESTED if verdict is None else QUALITY_STATUS.get(verdict, UNDECIDED)
    if row["criterion"].startswith("gender bias cut"):
        if pd.isna(row["ci_low"]) or pd.isna(row["ci_high"]):
            return NOT_TESTED
        return MET if row["ci_low"] >= gender_cut else MISSED if row["ci_high"] < gender_cut else UNDECIDED
    if pd.isna(row["q_value"]) and pd.isna(row["ci_low"]):
        return NOT_TESTED
    if not pd.isna(row["ci_low"]):
        return MET if row["ci_high"] <= other_rise else MISSED if row["ci_low"] > other_rise else UNDECIDED
    return MET if row["passes"] else MISSED if row["q_value"] < alpha else UNDECIDED


#: the three kinds of criterion, as :func:`criteria_summary` counts them
KINDS = ("cut", "quality", "other")


def kind_of(checks: pd.DataFrame) -> pd.Series:
    """Each criterion's kind: the gender ``cut``, ``quality``, or another attribute's bias (``other``)."""
    return pd.Series(["cut" if c.startswith("gender bias cut") else "quality" if k == "quality" else "other"
                      for c, k in zip(checks["criterion"], checks["kind"])], index=checks.index)


def criteria_summary(checks: pd.DataFrame) -> pd.DataFrame:
    """Per metric, from a :func:`criteria` table: criteria met, missed, tested (met, missed or not distinguishable)
    and in all, and per kind (:data:`KINDS`) those met and tested (``cut met``, ``cut tested``, ...), the gender
    bias cut on each gender set, the largest quality change (relative, signed; ``quality on``: its set) and the
    largest rise of another attribute's bias, with the set it is on and the Benjamini–Hochberg adjusted p-value of
    that rise (``q of that rise``) and its 95% interval (``that rise low``, ``that rise high``; NaN without one)."""
    rows = []
    kinds = kind_of(checks)
    for label, c in checks.groupby("metric", sort=False):
        row = {"metric": label, "criteria met": int((c["status"] == MET).sum()),
               "criteria missed": int((c["status"] == MISSED).sum()),
               "criteria tested": int((c["status"] != NOT_TESTED).sum()), "criteria": len(c)}
        for kind in KINDS:
            mine = c[kinds.loc[c.index] == kind]
            row[f"{kind} met"] = int((mine["status"] == MET).sum())
            row[f"{kind} tested"] = int((mine["status"] != NOT_TESTED).sum())
        for r in c[c["criterion"].str.startswith("gender bias cut")].itertuples():
            row[f"gender bias cut ({r.dataset})"] = r.value
        quality = c[c["kind"] == "quality"]
        if len(quality):
            largest = quality["value"].abs().idxmax()
            row["largest quality change"] = quality["value"].loc[largest]
            row["quality on"] = quality["dataset"].loc[largest]
        other = c[(c["kind"] == "bias") & ~c["criterion"].str.startswith("gender bias cut")]
        if len(other):
            top = other.loc[other["value"].idxmax()]
            row["largest rise of another bias"] = top["value"]
            row["on"] = f"{top['dataset']} {top['name']}"
            row["q of that rise"] = float(top["q_value"])
            row["that rise low"], row["that rise high"] = float(top["ci_low"]), float(top["ci_high"])
            row["that rise"] = top["status"]
        rows.append(row)
    return pd.DataFrame(rows)


def missed(checks: pd.DataFrame) -> pd.DataFrame:
    """The criteria of a :func:`criteria` table that are not met (missed, not distinguishable or not tested), with
    what they judge (``before``, ``after``, ``n``), the paired permutation p-value of a bias change and its
    Benjamini–Hochberg adjustment (NaN where there is no test)."""
    cols = ["metric", "criterion", "status", "value", "threshold", "before", "after", "n", "p_value", "q_value"]
    return checks.loc[checks["status"] != MET, cols].reset_index(drop=True)


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


def example_pair(attribute: str = "gender", index: int = 0) -> pd.Series:
    """One pair of the released dataset of ``attribute``, in the pair layout (:mod:`metricbias.datasets.schema`)."""
    return datasets.load("published", [attribute]).iloc[index]


def matching_maps(adapter, pair, *, device: str = "auto") -> dict:
    """BERTScore's matching maps of both candidates of ``pair`` (a row of the pair layout) against their
    references, without and with ``adapter``.

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
        for cand, ref in (("candidate_1", "reference_1"), ("candidate_2", "reference_2")):
            maps[(variant, cand)] = metric.matching_map(pair[cand], pair[ref])
            scores[(variant, cand)] = float(score_texts(metric, [pair[cand]], [pair[ref]], what="matching maps")[0])
    return {"maps": maps, **{f"gap_{v}": scores[(v, "candidate_1")] - scores[(v, "candidate_2")] for v in variants}}


def shipped_adapters(wanted: dict, suffix: str = "") -> dict:
    """The trained adapters of ``wanted`` (label -> (metric, backbone)) found by name: label -> :class:`training.Shipped`.

    ``suffix``: another configuration's adapters, named ``debiased-<metric>-<backbone><suffix>`` (e.g.
    :data:`TABLE7`). Trains nothing: a missing adapter is one error naming every missing one and the command that
    trains it.
    """
    found, missing = {}, []
    for label, (metric, backbone) in wanted.items():
        try:
            found[label] = training.shipped(metric, backbone, suffix)
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


def results_sizes(source: str, results: pd.DataFrame) -> pd.DataFrame:
    """Where an :func:`adapter_results` table comes from (``source``: "recorded" with each adapter after its
    training, or "computed" by the chapter) and on how much: bias pairs, (metric, set) cells, quality items."""
    bias_rows, quality_rows = results[results["kind"] == "bias"], results[results["kind"] == "quality"]
    return pd.DataFrame([{"figures": {"recorded": "recorded with each adapter after its training"}.get(
        source, "computed by the chapter"), "bias pairs": int(bias_rows["n"].sum()), "bias cells": len(bias_rows),
        "quality items": int(quality_rows["n"].sum())}])


def findings(results: pd.DataFrame, quality: dict | None = None, cuts: pd.DataFrame | None = None,
             changes: pd.DataFrame | None = None, **thresholds) -> dict:
    """Chapter 6's headline numbers from a :func:`compare_all` table (e.g. the chapter's download of it) and the
    quality verdicts and the cut intervals of :func:`criteria` (``quality``, ``cuts``).

    Per adapter (key prefix: the metric label in lower case): ``gender_bias_cut_<dataset>`` on each gender
    set with ``gender_bias_p_<dataset>`` (its paired permutation test, as text: "p = 0.002"), ``criteria_met`` and
    ``criteria_missed`` of ``criteria_tested`` (those with a test) and of ``criteria``, ``criteria_untested`` (those
    without), and
    ``largest_quality_change`` (relative, signed).
    """
    from ...bias.claims import format_p, permutation_floor

    floor = permutation_floor(CHANGE_TEST_RESAMPLES)
    out = {}
    checks = criteria(results, quality, cuts, changes, **thresholds)
    for r in checks[checks["criterion"].str.startswith("gender bias cut")].itertuples():
        # the paired permutation p-value of the bias change, as the page writes it (a bound at the test's floor)
        out[f"{r.metric.lower().replace(' ', '_')}_gender_bias_p_{r.dataset}"] = format_p(r.p_value, resolution=floor)
    for row in criteria_summary(checks).to_dict("records"):
        key = row["metric"].lower().replace(" ", "_")
        for col, value in row.items():
            if col.startswith("gender bias cut ("):
                out[f"{key}_gender_bias_cut_{col[len('gender bias cut ('):-1]}"] = float(value)
        for col in ("criteria met", "criteria missed", "criteria tested", "criteria"):
            out[f"{key}_{col.replace(' ', '_')}"] = row[col]
        out[f"{key}_criteria_untested"] = row["criteria"] - row["criteria tested"]
        if "largest quality change" in row:
            out[f"{key}_largest_quality_change"] = float(row["largest quality change"])
    return out


# --- Table 7's learning rate and batch size beside our default configuration --------------------------------

#: the name suffix of the adapters trained with Table 7's learning rate and batch size (``debiased-*-table7``)
TABLE7 = "-table7"


def paired_bias_difference(first: pd.DataFrame, second: pd.DataFrame, *, attribute: str = "gender",
                           columns=("first bias", "second bias"), n_resamples: int = CHANGE_TEST_RESAMPLES,
                           seed: int = 0) -> pd.DataFrame:
    """Per dataset of two score tables of the same pairs (``score_pairs``): the Eq. 2 bias of each (columns
    ``columns``), their difference (first minus second) with its 95% BCa bootstrap interval over pairs and the
    paired permutation p-value (:func:`metricbias.bias.significance.paired_permutation_test` on the per-pair terms
    of Eq. 2, each table rescaled with its own Eq. 1)."""
    from ...bias.pairwise import pair_terms
    from ...bias.significance import paired_permutation_test

    rows = []
    for dataset, idx in first.groupby("dataset", sort=False).indices.items():
        a, b = first.iloc[idx], second.iloc[idx]
        if list(a["pair_id"]) != list(b["pair_id"]):
            raise ValueError(f"{dataset}: the two score tables hold different pairs")
        terms = [pair_terms(t["score_1"], t["score_2"], metric=t["metric"].iloc[0], attribute=f"{dataset} {attribute}")
                 for t in (a, b)]
        test = paired_permutation_test(*terms, n_resamples=n_resamples, seed=seed)
        rows.append({"dataset": dataset, "attribute": attribute, "n_pairs": len(idx), columns[0]: float(terms[0].mean()),
                     columns[1]: float(terms[1].mean()), **test})
    return pd.DataFrame(rows)


def configurations(default: dict, other: dict, n_examples: int) -> pd.DataFrame:
    """Per metric, our default adapter and another configuration's (label -> :class:`training.Shipped`, e.g.
    :data:`TABLE7`), from their metadata and recorded figures: steps and their share of Table 7's, batch, learning
    rate, device, the gender bias cut on each gender set and the largest quality change."""
    rows = {}
    for name, adapters in (("default", default), ("Table 7", other)):
        summary = adapter_summary({label: a.folder for label, a in adapters.items()}, n_examples)
        met = criteria_summary(criteria(recorded_results(adapters))).set_index("metric")
        for row in summary.to_dict("records"):
            found, cuts = adapters[row["metric"]], met.loc[row["metric"]]
            rows[row["metric"], name] = {
                "metric": row["metric"], "configuration": name, "steps": row["steps"],
                "share of Table 7 steps": row["steps"] / training.PAPER_HPARAMS[found.meta["metric"]]["steps"],
                "batch": row["batch"], "learning rate": row["learning rate"],
                "device": found.provenance.get("device_name", row["device"]),
                **{k: cuts[k] for k in cuts.index if k.startswith("gender bias cut")},
                "largest quality change": cuts["largest quality change"], "quality change on": cuts["quality on"]}
    return pd.DataFrame([rows[label, name] for label in default for name in ("default", "Table 7")])


def configuration_difference(default: dict, other: dict, *, attribute: str = "gender", sample_size: int = 0,
                             seed: int = 0, n_resamples: int = CHANGE_TEST_RESAMPLES, cache=None,
                             device: str = "auto") -> pd.DataFrame:
    """Does the other configuration's adapter leave a different Eq. 2 bias than the default's on the same
    ``attribute`` pairs? Per metric and gender set: :func:`paired_bias_difference` (other minus default)."""
    from ...mitigation.evaluation import bias_pairs
    from ...scoring import score_pairs

    pairs = datasets.sample(bias_pairs([attribute]), sample_size, seed)
    frames = []
    for label in default:
        scored = [score_pairs(pairs, metric_for(a.folder, meta=a.meta, device=device), cache=cache, label=label)
                  for a in (other[label], default[label])]
        frames.append(paired_bias_difference(*scored, attribute=attribute, n_resamples=n_resamples, seed=seed,
                                             columns=("Table 7 bias", "default bias")).assign(metric=label))
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", *[c for c in out.columns if c != "metric"]]]


def configuration_verdicts(difference: pd.DataFrame, alpha: float = 0.05) -> dict:
    """Per metric (key: the label in lower case), the word for the bias Table 7's adapter leaves beside the
    default's over the gender sets of a :func:`configuration_difference` table: ``"less"`` or ``"more"`` when the
    difference is significant at ``alpha`` on every set in that direction, ``"not distinguishable"`` when it is on
    none, ``"mixed"`` otherwise."""
    out = {}
    for label, rows in difference.groupby("metric", sort=False):
        sig = rows[rows["p_value"] < alpha]
        signs = set((sig["difference"] > 0).map({True: "more", False: "less"}))
        word = ("not distinguishable" if sig.empty else signs.pop() if len(signs) == 1 and len(sig) == len(rows)
                else "mixed")
        out[label.lower().replace(" ", "_")] = word
    return out
