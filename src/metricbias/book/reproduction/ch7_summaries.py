"""Chapter 7: summaries of the meta-evaluation tables of :mod:`metricbias.metaeval.analysis` as the page
shows them (pronoun readings, swap coverage, preference counts and shares, shifts), and the chapter's headline
numbers (:func:`findings`).
"""

from __future__ import annotations

from typing import Iterable

import pandas as pd

from ...bias import claims
from ...datasets.meta_eval import JudgedSet, PairSet
from ...datasets.swap import lexicon
from ...metrics.registry import resolve
from ...metaeval.analysis import correlations, preference_tests, selection


#: the attributes a meta-evaluation set can be swapped on
SWAPS = ("gender",)


def check_swap_attributes(attributes=None) -> list[str]:
    """The swappable attributes among ``attributes`` (a list, a comma-separated string or None for all); a
    selection that names none of them is an error (one line naming them)."""
    if isinstance(attributes, str):
        attributes = [a.strip() for a in attributes.split(",") if a.strip()]
    chosen = [a for a in SWAPS if attributes is None or a in attributes]
    if not chosen:
        raise ValueError(f"attributes={','.join(attributes)!r}: the swapped meta-evaluation is defined for "
                         f"{', '.join(SWAPS)} only; name it among the attributes or leave attributes unset")
    return chosen


def signatures(metrics: Iterable) -> pd.DataFrame:
    """``metric, signature`` of every metric (a label and its signature string)."""
    rows = [resolve(m) for m in metrics]
    return pd.DataFrame({"metric": [label for label, _ in rows], "signature": [m.signature for _, m in rows]})


def metric_names(scorers: Iterable) -> str:
    """The labels of the chapter's ``(label, metric)`` configurations, comma-separated."""
    return ", ".join(label for label, _ in scorers) or "none"


def distinct_configurations(performance_table: pd.DataFrame) -> int:
    """How many (metric, aggregation) configurations of a :func:`performance` table differ from every other: two
    whose correlations before and after the swap agree (to 12 decimals) on every subset, statistic and way of using
    the judges are one configuration counted once, as chapter 3 counts identical configurations."""
    keys = ["subset", "judges", "statistic"] if "judges" in performance_table else ["subset", "statistic"]
    wide = performance_table.pivot_table(index=["metric", "aggregation"], columns=keys, values=["origin", "swap"],
                                         dropna=False)
    return int(len(wide.round(12).drop_duplicates()))


def lexicon_summary(lex=None) -> pd.DataFrame:
    """Words of the swap lexicon per source list and kind: ``source, kind, words``."""
    lex = lexicon() if lex is None else lex
    entries = pd.DataFrame([{"source": e.source.split(":")[0], "kind": e.kind} for e in lex.values()])
    return entries.groupby(["source", "kind"]).size().rename("words").reset_index()


#: the possessive/object words whose swap depends on the next token, and the readings that make them objects
AMBIGUOUS = ("her", "his")
OBJECT_READINGS = ("him", "hers")


def pronoun_readings(dataset: JudgedSet, lex=None) -> pd.DataFrame:
    """Every *her* and *his* in the distinct texts of ``dataset`` (hypotheses, then references) and what the
    swapper made of it: ``word, swapped_to, text``."""
    from ...datasets.swap import swap_gender

    lex = lexicon() if lex is None else lex
    frame = dataset.frame
    texts = dict.fromkeys([*frame["hypothesis"], *frame["references"].explode()])
    rows = [{"word": old.lower(), "swapped_to": new.lower(), "text": t}
            for t in texts for _, old, new in swap_gender(t, lex).replacements if old.lower() in AMBIGUOUS]
    return pd.DataFrame(rows, columns=["word", "swapped_to", "text"])


def reading_counts(readings: pd.DataFrame) -> pd.DataFrame:
    """How often each reading of :func:`pronoun_readings` was chosen: ``word, swapped_to, occurrences``."""
    return readings.groupby(["word", "swapped_to"]).size().rename("occurrences").reset_index()


def object_readings(readings: pd.DataFrame, n: int = 8) -> pd.DataFrame:
    """The first ``n`` texts where *her* became *him* or *his* became *hers*."""
    return readings[readings["swapped_to"].isin(OBJECT_READINGS)].head(n).reset_index(drop=True)


def swap_coverage(sets: dict) -> pd.DataFrame:
    """Per meta-evaluation set (name -> :class:`JudgedSet` or :class:`PairSet`): rows, levels, human judgements,
    distinct texts and how many of them the gender swap changes."""
    rows = []
    for label, ds in sets.items():
        cols = ["reference", "better", "worse"] if isinstance(ds, PairSet) else ["hypothesis", "references"]
        distinct = {t for c in cols for t in ds.frame[c].explode()}
        changed = len(ds.swapped().swap_report)
        rows.append({"set": label, "rows": len(ds), "levels": ", ".join(ds.levels),
                     "human": ", ".join(getattr(ds, "aspects", ["better/worse"])), "distinct texts": len(distinct),
                     "texts changed by the swap": changed, "share changed": changed / len(distinct)})
    return pd.DataFrame(rows)


def selection_counts(dataset: JudgedSet) -> pd.DataFrame:
    """How many examples of ``dataset`` fall in each group of :func:`selection`: ``examples, count``."""
    sel = selection(dataset)
    hyp = sel["hypothesis_gender"]
    counts = {"hypothesis male only": int((hyp == "male").sum()),
              "hypothesis female only": int((hyp == "female").sum()),
              "hypothesis mixed": int((hyp == "mixed").sum()),
              "hypothesis without gendered words": int((hyp == "none").sum()),
              "references all gender-neutral": int(sel["references_neutral"].sum()),
              "preference set (neutral references, male-only hypothesis)": int(sel["preference"].sum())}
    return pd.DataFrame({"examples": list(counts), "count": list(counts.values())})


def preference_summary(pref: pd.DataFrame, *, alpha: float = claims.ALPHA) -> dict:
    """From a :func:`preference` table: ``pairs``, ``configurations`` (metric x aggregation), and how many
    configurations tie on every pair (``tied``), prefer the male hypothesis (``prefer_male``) or the female one
    (``prefer_female``) by the sign test of :func:`preference_tests` (BH-adjusted p below ``alpha``), and how many
    lean one way without a significant test (``not_significant``), with their names (``tied_names`` ...)."""
    pref = preference_tests(pref, alpha=alpha)
    label = pref["metric"] + " (" + pref["aggregation"] + ")"
    groups = {"tied": pref["share_equal"] == 1.0,
              "prefer_male": pref["prefers"] == "male",
              "prefer_female": pref["prefers"] == "female",
              "not_significant": (pref["prefers"] == "neither") & (pref["share_equal"] < 1.0)}
    out = {"pairs": int(pref["n"].iloc[0]), "configurations": len(pref), "alpha": alpha,
           "lean_male": int((pref["n_male_higher"] > pref["n_female_higher"]).sum()),
           "lean_female": int((pref["n_female_higher"] > pref["n_male_higher"]).sum())}
    for key, mask in groups.items():
        out[key] = int(mask.sum())
        out[f"{key}_names"] = ", ".join(label[mask]) or "none"
    out["prefer_either"] = out["prefer_male"] + out["prefer_female"]
    return out


def preference_shares(pref: pd.DataFrame) -> pd.DataFrame:
    """A :func:`preference` table in long form for a figure: ``label`` ("metric (aggregation)"), ``outcome``
    (male higher, equal, female higher) and ``share``."""
    labelled = pref.assign(label=pref["metric"] + " (" + pref["aggregation"] + ")")
    long = labelled.melt(id_vars="label", value_vars=["share_male_higher", "share_equal", "share_female_higher"],
                         var_name="outcome", value_name="share")
    return long.assign(outcome=long["outcome"].str.removeprefix("share_").str.replace("_", " "))


def delta_grid(performance_table: pd.DataFrame, statistic: str = "spearman") -> pd.DataFrame:
    """Swap − origin of ``statistic`` per (metric, aggregation) row and subset column (a heatmap's grid)."""
    rows = performance_table[performance_table["statistic"] == statistic]
    if rows["judges"].nunique() > 1:
        raise ValueError("delta_grid: the table mixes ways of using the judges; keep one (filter on judges)")
    return rows.pivot_table(index=["metric", "aggregation"], columns="subset", values="delta", sort=False)


def labelled_rows(grid: pd.DataFrame) -> pd.DataFrame:
    """A :func:`delta_grid` with its (metric, aggregation) rows named as a page names them: "BLEU (max)" (the
    metric alone when it has no aggregation)."""
    names = [f"{m} ({a})" if isinstance(a, str) and a else str(m) for m, a in grid.index]
    return grid.set_axis(names, axis=0)


def top_k_gaps(curve: pd.DataFrame) -> pd.DataFrame:
    """Per metric of a :func:`top_k` table: mean and largest |swap − origin| over k, largest first."""
    wide = curve.pivot_table(index=["metric", "k"], columns="condition", values="spearman").dropna()
    gap = (wide["swap"] - wide["origin"]).abs().groupby("metric").agg(["mean", "max"])
    gap.columns = ["mean |swap − origin| over k", "max |swap − origin| over k"]
    return gap.sort_values("max |swap − origin| over k", ascending=False).reset_index()


def largest_shift(performance_table: pd.DataFrame, subset: str = "all") -> float:
    """The largest |swap − origin| of a :func:`performance` table's main statistic (Spearman, or DARR tau) on
    ``subset``; NaN when the table has no such row."""
    stat = "darr_tau" if (performance_table["statistic"] == "darr_tau").any() else "spearman"
    rows = performance_table[(performance_table["statistic"] == stat) & (performance_table["subset"] == subset)]
    return float(rows["delta"].abs().max()) if len(rows) else float("nan")


def reordered_pairs(performance_table: pd.DataFrame, subset: str = "all") -> int:
    """The largest DARR tau shift of a :func:`performance` table in pairs: tau = (concordant − discordant) / n with
    a metric tie counted as discordant, so one pair turning from concordant to discordant moves tau by 2/n, and a
    shift delta over n pairs is at least |delta|·n/2 pairs changing order (net). 0 without a DARR row."""
    rows = performance_table[(performance_table["statistic"] == "darr_tau") & (performance_table["subset"] == subset)]
    if rows.empty:
        return 0
    top = rows.loc[rows["delta"].abs().idxmax()]
    return int(round(abs(top["delta"]) * top["n_origin"] / 2))


def findings(pref: pd.DataFrame, performances: dict) -> dict:
    """Chapter 7's headline numbers: the preference counts of :func:`preference_summary` and, per set of
    ``performances`` (name -> :func:`performance` table), the largest correlation shift after swapping
    (``<set>_largest_shift``, and ``<set>_largest_shift_single_gender`` where the set has that subset)."""
    summary = preference_summary(pref)
    out = {k: v for k, v in summary.items() if not k.endswith("_names")}
    for name, table in performances.items():
        key = name.lower().replace(" ", "_").replace("-", "_")
        out[f"{key}_largest_shift"] = largest_shift(table, "all")
        if (table["subset"] == "single_gender").any():
            out[f"{key}_largest_shift_single_gender"] = largest_shift(table, "single_gender")
    return out


def same_tau(sets: dict, metrics: Iterable, *, cache=None) -> pd.DataFrame:
    """The DARR Kendall-like tau of each metric on several relative-ranking sets that should hold the same pairs
    (the registered WMT19 kk-en set, its generic JSONL, its pickle): one row per metric, one column per set name,
    and ``largest difference`` between them."""
    rows = []
    for metric in metrics:
        row = {}
        for name, dataset in sets.items():
            c = correlations(dataset, metric, cache=cache)
            row["metric"], row[name] = c["metric"].iloc[0], float(c["value"].iloc[0])
        values = [row[name] for name in sets]
        rows.append({**row, "largest difference": max(values) - min(values)})
    return pd.DataFrame(rows, columns=["metric", *sets, "largest difference"])
