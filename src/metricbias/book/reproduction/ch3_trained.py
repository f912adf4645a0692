"""Chapter 3: one quality table for every part trained by the project, beside its floor.

Every trained part is judged by one figure per measure, computed on the whole of its evaluation set and read
from the part's ``provenance.json`` (where ``metricbias train NAME --quality`` or the adapter's evaluation
records it):

* a **paraphraser** (``para-*``) as the metric BARTScore-F on it: the WMT19 kk-en DARR Kendall-like τ and the
  STS-B dev Pearson r, beside BLEU's on the same items (the floor: a part below BLEU is a weaker metric than BLEU);
* a **regression head** (``stsb-*``): the STS-B dev Pearson r, beside BLEU's;
* a **debiasing adapter** (``debiased-*``): the adapted metric's DARR τ and STS-B r, beside BLEU's;
* a **masked-LM head** (``mlm-*``): the masked-token accuracy on held-out sentences, beside the accuracy of always
  predicting the most frequent token (its reference point, recorded with it); its floor is
  :data:`~metricbias.book.reproduction.liu_table2.HEAD_FLOOR`, judged by an exact binomial test over its held-out
  masked positions (:func:`~metricbias.book.reproduction.liu_table2.floor_test`): only "below" keeps it out, as
  for a metric against BLEU.

A paraphraser's recorded figures count only when measured on the whole sets; where none are, the chapter's own
measurement of the same configuration on the whole sets (``live``) stands in, so that each part has one figure.
:func:`with_recorded` gives the chapter's quality table the recorded figures of the configurations that run on a
paraphraser, so that the rule, the figure and :func:`parts_quality` read the same numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...metaeval.quality import FLOOR_UNDECIDED
from .names import part_name

#: (set, statistic) of a recorded quality row -> (the chapter's quality column, the page's measure)
MEASURES = {("wmt19-kk-en", "darr_tau"): ("darr_tau", "WMT19 kk-en DARR τ"),
            ("stsb-dev", "pearson"): ("stsb_r", "STS-B dev r")}
ACCURACY = "masked-token accuracy"
#: trainer (:data:`metricbias.trained.recipes.RECIPES`) -> what the part is, on the page
KINDS = {"paraphraser": "paraphraser (BARTScore-F)", "regression": "regression head",
         "adapter": "debiasing adapter", "mlm_head": "masked-LM head"}
#: what a part's figure is set beside
BLEU, MOST_FREQUENT = "BLEU", "most frequent token"
COLUMNS = ["part", "kind", "measure", "value", "reference", "reference value", "floor", "above floor"]


def _full(sizes: dict) -> dict:
    from ...metaeval.quality import full_sizes

    return full_sizes() if sizes is None else sizes


def _recorded_paraphraser(info: dict, sizes: dict, metric: str = "bartscore F") -> dict:
    """{(set, statistic): value} of ``metric`` (BARTScore-F on a paraphraser, or the BLEU recorded beside it),
    recorded on the whole sets only."""
    whole = {"wmt19-kk-en": sizes["darr_pairs"], "stsb-dev": sizes["stsb_pairs"]}
    out = {}
    for row in info.get("quality", {}).get("rows", []):
        key = (row.get("dataset"), row.get("statistic"))
        if row.get("metric", "bartscore F") == metric and key in MEASURES and row.get("n") == whole[key[0]]:
            out[key] = float(row["value"])
    return out


def _recorded_adapter(info: dict, sizes: dict) -> dict:
    """{(set, statistic): value} of the adapted metric ("after"), from the adapter's recorded evaluation."""
    whole = {"wmt19-kk-en": sizes["darr_pairs"], "stsb-dev": sizes["stsb_pairs"]}
    out = {}
    for row in info.get("figures", {}).get("evaluation", []):
        key = (row.get("dataset"), row.get("statistic"))
        if row.get("kind") == "quality" and key in MEASURES and row.get("n") == whole[key[0]]:
            out[key] = float(row["after"])
    return out


def recorded(names=None, sizes: dict | None = None) -> dict:
    """``{part: {"trainer", "figures": {(set, statistic) or "accuracy": value}, "reference": value, "bleu":
    {(set, statistic): value}}}`` for every trained part found (``names``: default every recipe but the smoke
    ones), read from its provenance (``bleu``: BLEU's whole-set figures recorded beside a paraphraser's)."""
    from ... import backbones
    from ...trained.recipes import RECIPES
    from .liu_table2 import masked_positions

    sizes = _full(sizes)
    out = {}
    for name in (names if names is not None else [n for n in RECIPES if not n.endswith("-smoke")]):
        folder = backbones.trained_path(name)
        if folder is None:
            continue
        trainer, info = RECIPES[name][0], backbones.trained_info(folder)
        figures, reference, bleu, extra = {}, np.nan, {}, {}
        if trainer == "paraphraser":
            figures, bleu = _recorded_paraphraser(info, sizes), _recorded_paraphraser(info, sizes, "bleu")
        elif trainer == "adapter":
            figures = _recorded_adapter(info, sizes)
        elif trainer == "regression":
            r = info.get("figures", {}).get("stsb_dev_pearson")
            if r is not None and info.get("dev_rows") == sizes["stsb_pairs"]:
                figures = {("stsb-dev", "pearson"): float(r)}
        elif trainer == "mlm_head":
            f = info.get("figures", {})
            if "masked_token_accuracy" in f:
                figures = {"accuracy": float(f["masked_token_accuracy"])}
            reference = float(f.get("most_frequent_token_accuracy", np.nan))
            extra = {"positions": masked_positions(f)}
        out[name] = {"trainer": trainer, "figures": figures, "reference": reference, "bleu": bleu, **extra}
    return out


def _paraphraser_configurations(entries) -> dict:
    """{paraphraser: label of the BARTScore-F configuration that runs on it} among ``entries`` (Spec list)."""
    return {e.options["backbone"]: e.label for e in entries
            if e.name == "bartscore" and e.options.get("variant") == "F" and str(e.options.get("backbone", ""))
            .startswith("para-")}


def with_recorded(quality: pd.DataFrame, entries, parts: dict) -> pd.DataFrame:
    """``quality`` (:func:`metricbias.metaeval.quality.configuration_quality`) with the recorded whole-set figures
    (:func:`recorded`) in place of the measured ones for every configuration that runs on a paraphraser: one figure
    per trained part. A paraphraser with no whole-set record keeps the chapter's measurement."""
    out = quality.copy()
    on = {label: part for part, label in _paraphraser_configurations(entries).items()}
    for label, part in on.items():
        figures = parts.get(part, {}).get("figures", {})
        for key, (column, _) in MEASURES.items():
            if key in figures and label in set(out["metric"]):
                out.loc[out["metric"] == label, column] = figures[key]
    return out


def parts_quality(parts: dict, quality: pd.DataFrame, entries, sizes: dict | None = None,
                  head_floor: float | None = None, floors: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (trained part, measure): :data:`COLUMNS`. ``parts``: :func:`recorded`; ``quality``: the
    chapter's quality table after :func:`with_recorded` (its BLEU row is the floor of a metric, else BLEU's
    figures recorded beside a paraphraser; and it stands in for a paraphraser without a whole-set record, when it
    was measured on the whole sets). ``floors`` (:func:`part_floors`): a metric part's "above floor" is the word of
    its paired comparison with BLEU ("above", "below", "not distinguishable"; "not measured" without one); a
    masked-LM head's is the exact binomial test of its accuracy over its ``positions`` against ``head_floor``
    (:func:`~metricbias.book.reproduction.liu_table2.floor_test`)."""
    from .liu_table2 import HEAD_FLOOR, floor_test

    head_floor = HEAD_FLOOR if head_floor is None else head_floor
    sizes = _full(sizes)
    by_label = quality.set_index("metric")
    whole = {"darr_tau": ("darr_pairs", sizes["darr_pairs"]), "stsb_r": ("stsb_pairs", sizes["stsb_pairs"])}

    def measured(label, column):
        if label not in by_label.index:
            return np.nan
        count, size = whole[column]
        row = by_label.loc[label]
        return float(row[column]) if count not in row or int(row[count]) == size else np.nan

    bleu = {column: measured(BLEU, column) for column in whole}
    for part in parts.values():  # where BLEU was not measured on the whole sets here: as recorded beside a part
        for key, (column, _) in MEASURES.items():
            if np.isnan(bleu[column]) and key in part.get("bleu", {}):
                bleu[column] = part["bleu"][key]
    live = _paraphraser_configurations(entries)
    words = {} if floors is None else {(r["part"], r["measure"]): r["floor"] for r in floors.to_dict("records")}
    rows = []
    for name, part in parts.items():
        kind = KINDS[part["trainer"]]
        if part["trainer"] == "mlm_head":
            value = part["figures"].get("accuracy", np.nan)
            rows.append({"part": name, "kind": kind, "measure": ACCURACY, "value": value,
                         "reference": MOST_FREQUENT, "reference value": part["reference"], "floor": head_floor,
                         "above floor": floor_test(value, part.get("positions", np.nan), head_floor)["word"]})
            continue
        for key, (column, measure) in MEASURES.items():
            value = part["figures"].get(key, np.nan)
            if np.isnan(value) and part["trainer"] == "paraphraser" and name in live:
                value = measured(live[name], column)
            if np.isnan(value) and part["trainer"] != "paraphraser":
                continue  # a regression head records its STS-B r only
            rows.append({"part": name, "kind": kind, "measure": measure, "value": value, "reference": BLEU,
                         "reference value": bleu[column], "floor": bleu[column],
                         "above floor": "not measured" if np.isnan(value) else words.get((name, measure),
                                                                                          "not measured")})
    order = {kind: i for i, kind in enumerate(KINDS.values())}
    out = pd.DataFrame(rows, columns=COLUMNS)
    return out.sort_values("kind", key=lambda c: c.map(order), kind="stable", ignore_index=True)


def part_specs(parts: dict, entries=()) -> dict:
    """{part: :class:`~metricbias.metrics.Spec`} of the metric each trained part makes, as the chapter measures it:
    a paraphraser's BARTScore-F (the live configuration of ``entries`` where there is one, else the fixed-backbone
    grid's), a regression head's regression metric, an adapter's metric with the adapter attached. Masked-LM heads
    are not metrics and have no entry; nor has a part whose files or frozen base encoder are absent."""
    from ... import backbones
    from ...metrics import backbone_grid
    from ...metrics.registry import Spec
    from ...mitigation import evaluation

    known = [*entries, *backbone_grid.entries(only_available=False)]
    adapters = evaluation.shipped_adapter_specs()
    here = set(backbones.available())

    def runs(backbone: str) -> bool:  # a trained part runs only where its frozen base encoder is installed
        found = backbones.BACKBONES.get(backbone)
        return backbone in here and (found is None or not found.base or found.base in here)

    out = {}
    for name, part in parts.items():
        if not runs(adapters[name][1]["backbone"] if name in adapters else name):
            continue
        if part["trainer"] in ("paraphraser", "regression"):
            metric = "bartscore" if part["trainer"] == "paraphraser" else "regression"
            found = [e for e in known if e.name == metric and e.options.get("backbone") == name
                     and e.options.get("variant", "F") == "F"]
            if found:
                out[name] = Spec(*found[0])
        elif part["trainer"] == "adapter" and name in adapters:
            out[name] = Spec(part_name(name), *adapters[name])
    return out


def part_floors(parts: dict, entries=(), *, darr_pairs: int = 0, stsb_pairs: int = 0, seed: int = 0,
                device: str = "auto", n_resamples: int = 9999) -> pd.DataFrame:
    """Each trained metric part (:func:`part_specs`) against BLEU on the same items, paired
    (:func:`metricbias.metaeval.quality.paired_quality`): one row per (part, measure) with ``part``, ``measure``
    (the page's name), the difference from BLEU with its 95% interval and the ``floor`` word ("above", "below",
    "not distinguishable")."""
    from ...metaeval.quality import PAIRED_COLUMNS, paired_quality
    from .ch3_quality import reference_spec

    specs = part_specs(parts, entries)
    if not specs:
        return pd.DataFrame(columns=["part", *PAIRED_COLUMNS])
    # a regression head is judged on STS-B only (its DARR τ is not a figure of the part)
    heads = {parts[p]["trainer"] == "regression" for p in specs}
    paired = pd.concat([paired_quality(
        list({s.label: s for p, s in specs.items() if (parts[p]["trainer"] == "regression") == head}.values()),
        reference_spec(entries), darr_pairs=darr_pairs, stsb_pairs=stsb_pairs, seed=seed, device=device,
        n_resamples=n_resamples, measures=("stsb_r",) if head else ("darr_tau", "stsb_r")) for head in sorted(heads)],
        ignore_index=True)
    by_label = {spec.label: part for part, spec in specs.items()}
    names = dict(MEASURES.values())
    return paired.assign(part=paired["metric"].map(by_label), measure=paired["measure"].map(names))[
        ["part", *PAIRED_COLUMNS]]


#: the rows of :func:`page_table` that hold the references, not a trained part
REFERENCE_ROWS = {BLEU: "BLEU (the floor of a metric)", MOST_FREQUENT: "most frequent token (a head's reference)"}


def page_table(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`parts_quality` as the page shows it: one row per part with a column per measure (``DARR τ``,
    ``STS-B r``, ``masked-token accuracy``) and whether it is above its floor on every measure it has, after a
    row for each reference (BLEU, the most frequent token) with its figures on the same items."""
    columns = {"WMT19 kk-en DARR τ": "DARR τ", "STS-B dev r": "STS-B r", ACCURACY: ACCURACY}
    rows = {}
    for r in table.to_dict("records"):
        row = rows.setdefault(r["part"], {"part": r["part"], "kind": r["kind"], "floor": []})
        row[columns[r["measure"]]] = r["value"]
        row["floor"].append(r["above floor"])
    for row in rows.values():
        marks = row.pop("floor")
        row["above floor"] = next((w for w in ("below", FLOOR_UNDECIDED, "not measured") if w in marks), "above")
    refs = []
    for reference, label in REFERENCE_ROWS.items():
        found = table[table["reference"] == reference]
        if len(found):
            values = found.groupby("measure", sort=False)["reference value"].first()
            refs.append({"part": label, "kind": "reference", **{columns[m]: v for m, v in values.items()}})
    out = pd.DataFrame(refs + list(rows.values()), columns=["part", "kind", *columns.values(), "above floor"])
    heads = (out["kind"] == KINDS["mlm_head"]) | (out["part"] == REFERENCE_ROWS[MOST_FREQUENT])
    out = pd.concat([out[~heads], out[heads]], ignore_index=True)  # the heads and their reference last
    return out[["part", "kind", *columns.values(), "above floor"]].assign(part=out["part"].map(part_name))


def below_floor(table: pd.DataFrame) -> list[str]:
    """The parts of :func:`parts_quality` below their floor on at least one measure."""
    return list(dict.fromkeys(table.loc[table["above floor"] == "below", "part"]))


def quality_findings(table: pd.DataFrame) -> dict:
    """Plain values of :func:`parts_quality` for prose and other pages: ``<part>_<measure>`` and the count of
    parts and of those below their floor (``parts``, ``below``) and their names (``below_names``)."""
    keys = {"WMT19 kk-en DARR τ": "darr_tau", "STS-B dev r": "stsb_r", ACCURACY: "accuracy"}
    out = {"parts": int(table["part"].nunique()), "below": len(below_floor(table)),
           "below_names": ", ".join(part_name(p) for p in below_floor(table)) or "none"}
    for r in table.to_dict("records"):
        stem = r["part"].replace("-", "_").lower()
        out[f"{stem}_{keys[r['measure']]}"] = r["value"]
        out[f"{stem}_{keys[r['measure']]}_reference"] = r["reference value"]
    return out


__all__ = ["ACCURACY", "BLEU", "COLUMNS", "KINDS", "MEASURES", "MOST_FREQUENT", "REFERENCE_ROWS", "below_floor",
           "page_table", "part_floors", "part_specs", "parts_quality",
           "quality_findings", "recorded", "with_recorded"]
