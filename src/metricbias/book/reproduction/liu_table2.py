"""Chapter 4's pseudo-log-likelihood results beside Liu's (2024) Table 2, each of ours with its interval.

* :func:`indicator_intervals`: Liu's indicator measure (Eq. 2) on SSS, CPS and AUL scores for each masked LM and
  dataset, with its 95% BCa bootstrap interval over pairs and the side of 50 the interval lies on;
* :func:`head_accuracy`: each masked LM's masked-token accuracy on held-out sentences, from its provenance (a
  trained head records it; a hub masked LM has none), and :func:`head_reference`, the reference point beside it
  (always predicting the most frequent token, on the same positions);
* :data:`HEAD_FLOOR`: chapter 3's rule for a trained part applied to the heads: a head below this accuracy enters
  no finding (:func:`below_floor`); its numbers stay in the table, marked;
* :func:`beside`: the page table, Liu's three models (paper) beside each of ours, with interval and verdicts;
* :func:`direction_sentence`: what the intervals say about the direction of ours against Liu's, and why a weak
  head can differ.

The scores come from :func:`metricbias.book.reproduction.liu2024.pll_scores`; KLS and JSS (on AUL) are shown as point
values from :func:`metricbias.book.reproduction.liu2024.table2_from_scores`. KLS is at least 50 by construction (the
larger of the two divergences over their sum), so it has no direction; JSS is at most 100.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...bias.pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_ci
from .liu2024 import PAPER, RUNS, table2

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


def _head_figure(models, figure: str) -> dict[str, float]:
    """{masked LM name: ``figures.<figure>`` of its trained head's provenance}; NaN for a model without one."""
    from ... import backbones

    out = {}
    for name in models:
        try:
            path = backbones.resolve(name)
        except (backbones.BackboneError, FileNotFoundError):
            path = None
        info = backbones.trained_info(path) if path is not None and backbones.is_trained_dir(path) else {}
        out[name] = float(info.get("figures", {}).get(figure, np.nan))
    return out


def head_accuracy(models) -> dict[str, float]:
    """{masked LM name: masked-token accuracy on held-out sentences} from each trained head's provenance
    (``figures.masked_token_accuracy``); NaN for a model without one (a hub masked LM)."""
    return _head_figure(models, "masked_token_accuracy")


def head_reference(models) -> dict[str, float]:
    """{masked LM name: accuracy of always predicting the most frequent training token, on the positions its
    accuracy counts} (``figures.most_frequent_token_accuracy``); NaN where not recorded."""
    return _head_figure(models, "most_frequent_token_accuracy")


def below_floor(accuracy: dict[str, float], floor: float = HEAD_FLOOR) -> list[str]:
    """The heads whose recorded masked-token accuracy is below ``floor`` (a model without one is not a head)."""
    return [m for m, a in accuracy.items() if not np.isnan(a) and a < floor]


def _paper_values(paper: pd.DataFrame, dataset: str, measure: str) -> dict[str, float]:
    """Liu's value of ``measure`` (the baseline SSS/CPS, AUL, KLS or JSS) on ``dataset`` per model."""
    rows = paper[paper["dataset"] == dataset].set_index("model")
    column = f"baseline{PAPER}" if measure in ("SSS", "CPS") else f"{measure}{PAPER}"
    return {m: float(rows.loc[m, column]) for m in PAPER_MODELS if m in rows.index}


def versus_paper(ci_low: float, ci_high: float, values) -> str:
    """Where an interval lies against Liu's values (points): below all, above all, or neither."""
    values = list(values)
    if not values or np.isnan(ci_low):
        return "—"
    if ci_high < min(values):
        return f"below all {len(values)}"
    if ci_low > max(values):
        return f"above all {len(values)}"
    return "overlaps their range"


def beside(intervals: pd.DataFrame, ours: pd.DataFrame | None = None, paper: pd.DataFrame | None = None,
           accuracy: dict[str, float] | None = None) -> pd.DataFrame:
    """One row per (dataset, measure, masked LM of ours): Liu's BERT / RoBERTa / ALBERT values (paper), ours with
    its interval, its side of 50 and where its interval lies against Liu's three values. ``ours``
    (:func:`~metricbias.book.reproduction.liu2024.table2_from_scores`) adds KLS and JSS on AUL as point values. Without
    results of ours, Liu's Table 2 as printed. With ``accuracy`` (:func:`head_accuracy`), a column gives each
    head's masked-token accuracy, and the verdicts of a head below :data:`HEAD_FLOOR` read :data:`NO_FINDING`."""
    paper = table2() if paper is None else paper
    if intervals.empty:
        return paper
    weak = set(below_floor(accuracy or {}))
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
                                 "ours": r[measure], "95% CI": "—", "vs 50": "—", "vs Liu": "—"})
                continue
            mine = intervals[(intervals["dataset"] == dataset) & (intervals["measure"] == measure)]
            for r in mine.to_dict("records"):
                rows.append({"dataset": dataset, "measure": measure, label: liu, "masked LM": r["model"],
                             "ours": r["value"], "95% CI": f"{r['ci_low']:.1f} to {r['ci_high']:.1f}",
                             "vs 50": r["side"], "vs Liu": versus_paper(r["ci_low"], r["ci_high"],
                                                                         published.values())})
    columns = ["dataset", "measure", label, "masked LM", "ours", "95% CI", "vs 50", "vs Liu"]
    out = pd.DataFrame(rows, columns=columns)
    if accuracy is not None:
        acc = out["masked LM"].map(lambda m: accuracy.get(m, np.nan))

        def shown(m, a):
            return "—" if np.isnan(a) else f"{a:.1%}" + (f" (below {HEAD_FLOOR:.0%})" if m in weak else "")

        out.insert(4, "head accuracy", [shown(m, a) for m, a in zip(out["masked LM"], acc)])
        mark = out["masked LM"].isin(weak) & (out["vs 50"] != "—")
        out.loc[mark, ["vs 50", "vs Liu"]] = NO_FINDING
    return out


BESIDE_NOTE = ("Ours: Liu's Eq. 2 (100 = every pair prefers the stereotypical sentence, 50 = no preference) with its "
               "95% BCa bootstrap interval over the pairs (its side of 50 is in the appendix). \"vs Liu\": where the "
               "interval lies against Liu's three values. KLS and JSS "
               "(on AUL) are point values; KLS is at least 50 by construction, so it has no direction. \"head "
               "accuracy\": the head's masked-token accuracy on held-out sentences; a head below "
               f"{HEAD_FLOOR:.0%} enters no finding (\"{NO_FINDING}\").")


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


def _listing(rows: pd.DataFrame) -> str:
    return "; ".join(f"{r['measure']} of `{r['model']}` on {r['dataset']} {r['value']:.1f} "
                     f"(95% CI {r['ci_low']:.1f} to {r['ci_high']:.1f})" for r in rows.to_dict("records"))


def floor_sentence(accuracy: dict[str, float], reference: dict[str, float] | None = None,
                   floor: float = HEAD_FLOOR) -> str:
    """Each head's masked-token accuracy with its reference point, and which heads are below ``floor`` and so enter
    no finding (Markdown; empty without a recorded accuracy)."""
    reference = reference or {}
    known = {m: a for m, a in accuracy.items() if not np.isnan(a)}
    if not known:
        return ""

    def one(m, a):
        ref = reference.get(m, np.nan)
        base = "" if np.isnan(ref) else f" (the most frequent token alone: {ref:.1%})"
        return f"`{m}` predicts the masked token {a:.1%} of the time{base}"

    text = ("On held-out sentences, " + "; ".join(one(m, a) for m, a in known.items())
            + ". Each head records these in its `provenance.json`: `masked_token_accuracy`, and as its reference "
            "point `most_frequent_token_accuracy`, always predicting the most frequent training token, on the same "
            "positions.")
    weak = below_floor(known, floor)
    if weak:
        who = ", ".join(f"`{m}`" for m in weak)
        verb = "is" if len(weak) == 1 else "are"
        text += (f" A head must reach {floor:.0%} before its results enter a finding (chapter 3's rule for a trained "
                 f"part): {who} {verb} below it, so {'its' if len(weak) == 1 else 'their'} rows are shown with "
                 f"\"{NO_FINDING}\" and are left out of every count and sentence below.")
    return text


def direction_sentence(intervals: pd.DataFrame, accuracy: dict[str, float], paper: pd.DataFrame | None = None,
                       reference: dict[str, float] | None = None) -> str:
    """A paragraph (Markdown): the direction of Liu's indicator values, each head's masked-token accuracy beside its
    reference point, and the direction of ours as their intervals decide it, for the heads at or above
    :data:`HEAD_FLOOR` only (:func:`floor_sentence`); when any of those is not on Liu's side of 50, why."""
    if intervals.empty:
        return ""
    weak = below_floor(accuracy)
    f = direction_findings(intervals, paper, excluded=weak)
    liu_side = (f"All {f['paper_results']} of Liu's indicator values lie above 50 ({f['paper_min']:.2f} to "
                f"{f['paper_max']:.2f}, no intervals given): the three pretrained masked LMs prefer the "
                "stereotypical sentence." if f["paper_above_50"] == f["paper_results"] else
                f"{f['paper_above_50']} of Liu's {f['paper_results']} indicator values lie above 50.")
    parts = [liu_side]
    floor_text = floor_sentence(accuracy, reference)
    if floor_text:
        parts.append(floor_text)
    if not f["results"]:
        parts.append("No indicator result of ours enters a finding here: every head measured is below its floor.")
        return " ".join(parts)
    parts.append(f"Of our {f['results']} indicator results{' from heads at or above the floor' if weak else ''}, "
                 f"the interval lies above 50 for {f['stereotypical']}, below 50 for {f['anti_stereotypical']}, and "
                 f"holds 50 for {f['neither']} (not distinguishable from 50 at this size).")
    kept = intervals[~intervals["model"].isin(weak)]
    below = kept[kept["side"] == BELOW]
    if len(below):
        parts.append(f"Against Liu's direction: {_listing(below)}.")
    if f["stereotypical"] < f["results"]:
        parts.append("Where ours do not lie above 50, the heads are the likely reason: a pseudo-log-likelihood is "
                     "only as informative as the head that computes it, and these heads are trained on a frozen "
                     "encoder with far less text than the pretraining of the masked LMs Liu measures, so the "
                     "preference between the two sentences of a pair need not follow Liu's direction. These results "
                     "describe the heads; they do not measure the bias of the pretrained encoders behind them.")
    return " ".join(parts)


__all__ = ["ABOVE", "BELOW", "BESIDE_NOTE", "HEAD_FLOOR", "INTERVAL_COLUMNS", "MEASURES", "NEITHER", "NO_FINDING",
           "NO_PREFERENCE", "PAPER_MODELS", "below_floor", "beside", "direction_findings", "direction_sentence",
           "floor_sentence", "head_accuracy", "head_reference", "indicator_intervals", "side_of_50", "versus_paper"]
