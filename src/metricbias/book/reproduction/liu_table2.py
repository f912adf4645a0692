"""Chapter 4's pseudo-log-likelihood results beside Liu's (2024) Table 2, each of ours with its interval.

* :func:`indicator_intervals`: Liu's indicator measure (Eq. 2) on SSS, CPS and AUL scores for each masked LM and
  dataset, with its 95% BCa bootstrap interval over pairs and the side of 50 the interval lies on;
* :func:`head_accuracy`: each masked LM's masked-token accuracy on held-out sentences, from its provenance (a
  trained head records it; a hub masked LM has none), and :func:`head_reference`, the reference point beside it
  (always predicting the most frequent token, on the same positions);
* :data:`HEAD_FLOOR`: chapter 3's rule for a trained part applied to the heads: :func:`floor_test`, an exact
  binomial test of the held-out masked-token accuracy against the floor (Clopper–Pearson interval), says "above",
  "below" or "not distinguishable" (:func:`head_tests`); a head *below* its floor enters no finding
  (:func:`below_floor`), and its rows leave the page table for the appendix (:func:`beside`, ``below``);
* :func:`beside`: the page table, Liu's three models (paper) beside each of ours, with its interval and which of
  Liu's values lie inside it (:func:`paper_inside`);
* :func:`direction_numbers`: what the intervals say about the direction of ours against Liu's, as counts and
  lists for the chapter's prose.

The scores come from :func:`metricbias.book.reproduction.liu2024.pll_scores`; KLS and JSS (on AUL) are shown as point
values from :func:`metricbias.book.reproduction.liu2024.table2_from_scores`. KLS is at least 50 by construction (the
larger of the two divergences over their sum), so it has no direction; JSS is at most 100.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...bias.pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_ci
from ...metaeval.quality import FLOOR_UNDECIDED
from .ch4_measures import counted
from .liu2024 import PAPER, RUNS, table2
from .names import part_name

#: PLL methods -> how Liu's Table 2 names their indicator measure
MEASURES = {"sss": "SSS", "cps": "CPS", "aul": "AUL"}
#: the indicator measure's "no preference" value
NO_PREFERENCE = 50.0
ABOVE, BELOW = "stereotypical", "anti-stereotypical"
#: the verdict when the interval holds 50
NEITHER = "not distinguishable from 50"
#: Liu's models, in the order of Table 2
PAPER_MODELS = ("BERT", "RoBERTa", "ALBERT")
INTERVAL_COLUMNS = ["dataset", "model", "measure", "n_pairs", "value", "ci_low", "ci_high", "side"]
#: the masked-token accuracy (held-out sentences) a trained head needs before its PLL results enter a finding
#: (issue 42: chapter 3's rule, a part below its floor enters no finding)
HEAD_FLOOR = 0.30
#: what the verdict columns say for a head below :data:`HEAD_FLOOR`
NO_FINDING = "no finding: head below its floor"
#: the mark after the name of a head below :data:`HEAD_FLOOR` in :func:`beside` (the caption says what it means)
BELOW_FLOOR_MARK = " †"


def side_of_50(ci_low: float, ci_high: float) -> str:
    """"stereotypical" when the interval lies above 50, "anti-stereotypical" below, else :data:`NEITHER`."""
    if ci_low > NO_PREFERENCE:
        return ABOVE
    if ci_high < NO_PREFERENCE:
        return BELOW
    return NEITHER


def indicator_intervals(scores: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                        seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Liu's Eq. 2 (100 × the share of pairs with f(S_st) > f(S_at)) per (dataset, masked LM, method) of ``scores``
    (:func:`~metricbias.book.reproduction.liu2024.pll_scores`), with its BCa bootstrap interval over the pairs and
    :func:`side_of_50`. Pairs with an undefined score (SSS with no modified token) are left out."""
    rows = []
    for (dataset, model, method), block in scores.groupby(["dataset", "model", "method"], sort=False):
        st, at = block["score_st"].to_numpy(float), block["score_at"].to_numpy(float)
        ok = np.isfinite(st) & np.isfinite(at)
        wins = 100.0 * (st[ok] > at[ok])
        if not wins.size:
            continue
        low, high = bootstrap_ci(wins, confidence=confidence, n_resamples=n_resamples, seed=seed)
        rows.append({"dataset": dataset, "model": model, "measure": MEASURES[method], "n_pairs": int(wins.size),
                     "value": float(wins.mean()), "ci_low": low, "ci_high": high, "side": side_of_50(low, high)})
    return pd.DataFrame(rows, columns=INTERVAL_COLUMNS)


def _head_provenance(models) -> dict[str, dict]:
    """{masked LM name: the ``figures`` of its trained head's provenance}; {} for a model without one."""
    from ... import backbones

    out = {}
    for name in models:
        try:
            path = backbones.resolve(name)
        except (backbones.BackboneError, FileNotFoundError):
            path = None
        info = backbones.trained_info(path) if path is not None and backbones.is_trained_dir(path) else {}
        out[name] = info.get("figures", {})
    return out


def head_accuracy(models) -> dict[str, float]:
    """{masked LM name: masked-token accuracy on held-out sentences} from each trained head's provenance
    (``figures.masked_token_accuracy``); NaN for a model without one (a hub masked LM)."""
    return {m: float(f.get("masked_token_accuracy", np.nan)) for m, f in _head_provenance(models).items()}


def head_reference(models) -> dict[str, float]:
    """{masked LM name: accuracy of always predicting the most frequent training token, on the positions its
    accuracy counts} (``figures.most_frequent_token_accuracy``); NaN where not recorded."""
    return {m: float(f.get("most_frequent_token_accuracy", np.nan)) for m, f in _head_provenance(models).items()}


def masked_positions(figures: dict) -> float:
    """How many held-out [MASK] positions a head's recorded accuracy counts (``figures`` of its provenance):
    ``masked_positions`` where recorded, else that of the training log's evaluation with the same accuracy (the
    kept one); NaN when neither is there."""
    if "masked_positions" in figures:
        return float(figures["masked_positions"])
    accuracy = figures.get("masked_token_accuracy")
    for entry in reversed(figures.get("log") or []):
        if "masked_positions" in entry and entry.get("masked_token_accuracy") == accuracy:
            return float(entry["masked_positions"])
    return np.nan


def head_positions(models) -> dict[str, float]:
    """{masked LM name: :func:`masked_positions` of its trained head}; NaN for a model without one."""
    return {m: masked_positions(f) for m, f in _head_provenance(models).items()}


def floor_test(accuracy: float, positions: float, floor: float = HEAD_FLOOR, confidence: float = 0.95) -> dict:
    """The exact binomial test of a masked-token accuracy measured on ``positions`` held-out positions against
    ``floor`` (:func:`scipy.stats.binomtest`): ``hits``, ``positions``, ``p_value`` (two-sided), the Clopper–Pearson
    interval (``ci_low``, ``ci_high``) and ``word``: "above" when the interval lies above ``floor``, "below" when
    below, :data:`~metricbias.metaeval.quality.FLOOR_UNDECIDED` otherwise ("not measured" without a figure)."""
    from scipy import stats

    if np.isnan(accuracy) or np.isnan(positions) or positions < 1:
        return {"hits": np.nan, "positions": positions, "p_value": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                "word": "not measured"}
    n = int(positions)
    hits = int(round(accuracy * n))
    test = stats.binomtest(hits, n, floor)
    ci = test.proportion_ci(confidence_level=confidence, method="exact")
    word = "above" if ci.low > floor else "below" if ci.high < floor else FLOOR_UNDECIDED
    return {"hits": hits, "positions": n, "p_value": float(test.pvalue), "ci_low": float(ci.low),
            "ci_high": float(ci.high), "word": word}


#: the columns of :func:`head_tests`
HEAD_COLUMNS = ["model", "accuracy", "reference", "hits", "positions", "ci_low", "ci_high", "p_value", "word"]


def head_tests(accuracy: dict[str, float], positions: dict[str, float], reference: dict[str, float] | None = None,
               floor: float = HEAD_FLOOR) -> pd.DataFrame:
    """One row per trained head (a model with a recorded accuracy; a hub masked LM has none): its accuracy, the
    most-frequent-token ``reference`` beside it, and :func:`floor_test` against ``floor`` (:data:`HEAD_COLUMNS`).
    ``accuracy``, ``positions``, ``reference``: :func:`head_accuracy`, :func:`head_positions`,
    :func:`head_reference`."""
    reference = reference or {}
    rows = [{"model": m, "accuracy": a, "reference": reference.get(m, np.nan),
             **floor_test(a, positions.get(m, np.nan), floor)} for m, a in accuracy.items() if not np.isnan(a)]
    return pd.DataFrame(rows, columns=HEAD_COLUMNS)


#: :data:`HEAD_COLUMNS` -> how the appendix labels them
HEAD_LABELS = {"model": "masked LM", "accuracy": "accuracy", "reference": "most frequent token", "hits": "right",
               "positions": "masked positions", "ci_low": "95% CI low", "ci_high": "95% CI high",
               "p_value": "p (two-sided)", "word": "against the floor"}


def head_rows(heads: pd.DataFrame) -> pd.DataFrame:
    """:func:`head_tests` for a page: the heads named in words, the columns labelled (:data:`HEAD_LABELS`)."""
    return heads.assign(model=heads["model"].map(part_name)).rename(columns=HEAD_LABELS)


def below_floor(heads: pd.DataFrame) -> list[str]:
    """The heads of :func:`head_tests` whose interval lies below their floor: they enter no finding."""
    return heads.loc[heads["word"] == "below", "model"].tolist() if len(heads) else []


def _paper_values(paper: pd.DataFrame, dataset: str, measure: str) -> dict[str, float]:
    """Liu's value of ``measure`` (the baseline SSS/CPS, AUL, KLS or JSS) on ``dataset`` per model."""
    rows = paper[paper["dataset"] == dataset].set_index("model")
    column = f"baseline{PAPER}" if measure in ("SSS", "CPS") else f"{measure}{PAPER}"
    return {m: float(rows.loc[m, column]) for m in PAPER_MODELS if m in rows.index}


def paper_inside(ci_low: float, ci_high: float, published: dict[str, float]) -> str:
    """Which of Liu's values (points, no intervals: {model: value}) lie inside our interval: their models' names, or
    "none". Liu's models are not ours, so this places their points against our uncertainty; it is not a test."""
    if not published or np.isnan(ci_low):
        return "—"
    return ", ".join(m for m, v in published.items() if ci_low <= v <= ci_high) or "none"


#: the page's column for :func:`paper_inside`
INSIDE = "Liu's values inside our 95% interval"


def accuracy_column(floor: float = HEAD_FLOOR) -> str:
    """The page's head-accuracy column, naming the floor a head must reach to enter a finding."""
    return f"head accuracy (floor {floor:.0%})"


def _head_cell(row: dict) -> str:
    """A head's accuracy for the page: "32.2% (95% CI 29.6% to 34.9%; most frequent token 5.3%)"."""
    interval = "" if np.isnan(row["ci_low"]) else f"95% CI {row['ci_low']:.1%} to {row['ci_high']:.1%}"
    reference = "" if np.isnan(row["reference"]) else f"most frequent token {row['reference']:.1%}"
    inside = "; ".join(x for x in (interval, reference) if x)
    return f"{row['accuracy']:.1%}" + (f" ({inside})" if inside else "")


def beside(intervals: pd.DataFrame, ours: pd.DataFrame | None = None, paper: pd.DataFrame | None = None,
           heads: pd.DataFrame | None = None, below: bool | None = None) -> pd.DataFrame:
    """One row per (dataset, measure, masked LM of ours): Liu's BERT / RoBERTa / ALBERT values (paper), ours with
    its interval, its side of 50 and which of Liu's three values lie inside our interval (:func:`paper_inside`).
    ``ours`` (:func:`~metricbias.book.reproduction.liu2024.table2_from_scores`) adds KLS and JSS on AUL as point
    values. Without results of ours, Liu's Table 2 as printed. With ``heads`` (:func:`head_tests`), a column
    (:func:`accuracy_column`, named with its floor) gives each head's accuracy with its exact interval and
    most-frequent-token reference, and the verdicts of a head below its floor read :data:`NO_FINDING`, its name
    marked with :data:`BELOW_FLOOR_MARK`. ``below``: None keeps every row, False only the heads not below their
    floor (the page table), True only those below (the appendix). Masked LMs are named in words
    (:func:`~.names.part_name`)."""
    paper = table2() if paper is None else paper
    if intervals.empty:
        return paper
    weak = set(below_floor(heads)) if heads is not None else set()
    label = f"Liu: {' / '.join(PAPER_MODELS)}{PAPER}"
    rows = []
    for dataset, (_, methods) in RUNS.items():
        measures = [MEASURES[m] for m in methods] + (["KLS", "JSS"] if ours is not None else [])
        for measure in measures:
            published = _paper_values(paper, dataset, measure)
            liu = " / ".join(f"{published[m]:.2f}" for m in PAPER_MODELS if m in published)
            if measure in ("KLS", "JSS"):
                for r in ours[ours["dataset"] == dataset].to_dict("records"):
                    rows.append({"dataset": dataset, "measure": f"{measure} (AUL)", label: liu, "masked LM": r["model"],
                                 "ours": r[measure], "95% CI": "—", "vs 50": "—", INSIDE: "—"})
                continue
            mine = intervals[(intervals["dataset"] == dataset) & (intervals["measure"] == measure)]
            for r in mine.to_dict("records"):
                rows.append({"dataset": dataset, "measure": measure, label: liu, "masked LM": r["model"],
                             "ours": r["value"], "95% CI": f"{r['ci_low']:.1f} to {r['ci_high']:.1f}",
                             "vs 50": r["side"], INSIDE: paper_inside(r["ci_low"], r["ci_high"], published)})
    columns = ["dataset", "measure", label, "masked LM", "ours", "95% CI", "vs 50", INSIDE]
    out = pd.DataFrame(rows, columns=columns)
    if heads is not None:
        cells = {r["model"]: _head_cell(r) for r in heads.to_dict("records")}
        out.insert(4, accuracy_column(), out["masked LM"].map(lambda m: cells.get(m, "—")))
        mark = out["masked LM"].isin(weak) & (out["vs 50"] != "—")
        out.loc[mark, ["vs 50", INSIDE]] = NO_FINDING
    if below is not None:
        out = out[out["masked LM"].isin(weak) == below].reset_index(drop=True)
    out["masked LM"] = [part_name(m) + (BELOW_FLOOR_MARK if m in weak else "") for m in out["masked LM"]]
    return out


def direction_findings(intervals: pd.DataFrame, paper: pd.DataFrame | None = None, excluded=()) -> dict:
    """Counts for the page: indicator results of ours (those of the ``excluded`` models left out: heads below their
    floor), how many lie above, below or across 50, how many of Liu's indicator values lie above 50, and the range
    of Liu's values."""
    paper = table2() if paper is None else paper
    intervals = intervals[~intervals["model"].isin(list(excluded))]
    liu = paper[[f"baseline{PAPER}", f"AUL{PAPER}"]].to_numpy(float).ravel()
    sides = intervals["side"].value_counts()
    return {"results": len(intervals), "stereotypical": int(sides.get(ABOVE, 0)),
            "anti_stereotypical": int(sides.get(BELOW, 0)), "neither": int(sides.get(NEITHER, 0)),
            "paper_results": int(liu.size), "paper_above_50": int((liu > NO_PREFERENCE).sum()),
            "paper_min": float(liu.min()), "paper_max": float(liu.max())}


def direction_numbers(intervals: pd.DataFrame, heads: pd.DataFrame | None = None,
                      paper: pd.DataFrame | None = None) -> dict:
    """Chapter 4's numbers on the PLL indicator results: :func:`direction_findings` for the heads not below their
    floor (``results``, ``stereotypical``, ``anti_stereotypical``, ``neither``, Liu's ``paper_*``), the heads
    tested (``heads``, :func:`head_tests`) and those below the floor (``weak``), and lists for prose ("none" when
    empty): ``baseline`` (the largest most-frequent-token reference) and ``floor_multiple`` (the floor over it),
    ``head_list`` (each head's accuracy with its exact 95% interval and floor word), ``weak_list`` and
    ``against_list`` (the results of kept heads whose interval lies below 50, with their intervals), ``directions``
    (the sides of 50 with their counts, empty sides left out) and ``against_floor`` (the floor words of the heads
    with a result below 50)."""
    heads = pd.DataFrame(columns=HEAD_COLUMNS) if heads is None else heads
    weak = below_floor(heads)
    f = direction_findings(intervals, paper, excluded=weak) if len(intervals) else {
        "results": 0, "stereotypical": 0, "anti_stereotypical": 0, "neither": 0,
        **{k: v for k, v in direction_findings(intervals.iloc[:0], paper).items() if k.startswith("paper")}}
    kept = intervals[~intervals["model"].isin(weak)]
    below = kept[kept["side"] == BELOW]
    against = "; ".join(f"{r['measure']} of {part_name(r['model'])} on {r['dataset']} {r['value']:.1f} (95% CI "
                        f"{r['ci_low']:.1f} to {r['ci_high']:.1f})" for r in below.to_dict("records"))
    baseline = max((r for r in heads["reference"].astype(float) if not np.isnan(r)), default=np.nan)
    return {**f, "heads": len(heads), "weak": len(weak), "floor": HEAD_FLOOR, "baseline": baseline,
            "floor_multiple": HEAD_FLOOR / baseline if baseline > 0 else np.nan,
            "head_list": "; ".join(f"{part_name(r['model'])} {r['accuracy']:.1%} (95% CI {r['ci_low']:.1%} to "
                                   f"{r['ci_high']:.1%}, {r['word']})" for r in heads.to_dict("records")) or "none",
            "weak_list": ", ".join(part_name(m) for m in weak) or "none",
            "directions": counted([("above 50 for", f["stereotypical"], ""), ("below 50 for", f["anti_stereotypical"],
                                   against), ("across 50 for", f["neither"], "")], empty="nowhere"),
            "against_floor": ", ".join(dict.fromkeys(heads.loc[heads["model"].isin(below["model"]), "word"])) or "none",
            "against_list": against or "none"}


__all__ = ["ABOVE", "BELOW", "BELOW_FLOOR_MARK", "HEAD_COLUMNS", "HEAD_FLOOR", "INTERVAL_COLUMNS", "MEASURES", "NEITHER", "NO_FINDING", "NO_PREFERENCE",
           "INSIDE", "PAPER_MODELS", "accuracy_column", "below_floor", "beside", "direction_findings", "direction_numbers", "floor_test",
           "HEAD_LABELS", "head_accuracy", "head_positions", "head_reference", "head_rows", "head_tests", "masked_positions", "indicator_intervals", "paper_inside", "side_of_50"]
