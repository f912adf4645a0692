"""What association tests run through metrics show (chapter 5), from :func:`metricbias.bias.association.run`.

* the tests and their cost (:func:`overview`, :func:`pair_counts`, :func:`timing`);
* effect sizes by metric and level (:func:`by_level`);
* the n-gram control: word n-gram metrics cannot associate texts that share no
  word (:func:`shared_word_pairs`, :func:`ngram_control`, :func:`ngram_findings`),
  and the word pairs METEOR matches by stem or synonym (:func:`matched_word_pairs`);
* which targets and attributes a static-embedding metric has vectors for
  (:func:`vector_coverage`);
* which configurations run on drawn sets (:func:`drawn_sets`, the chapter's one sentence built here) and how far
  drawing sentence-level sets down moves the effect sizes (:func:`sampling_check`).

Results carry the metric's ``label`` (column ``metric``), its registry ``name`` and its ``family``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ...bias import association
from .names import counted, joined, of_all

SIGNIFICANCE = 0.01  # Gao & Wan star p <= 0.01
#: the chapter's computation as one command (the Reproducibility appendix shows it)
COMMAND_LINE = ("`metricbias weat --test all --metric NAME --out F.csv` runs every test of this chapter through one "
                "metric with the same code (`metricbias.bias.association`), on whole sets; `--sample-size N` draws each "
                "sentence-level set to N texts. `--oov drop` (the default) drops the words a static-embedding metric "
                "has no vector for, as classic WEAT does; `--oov zero` keeps them as zero vectors.")
#: what the timing table of :func:`timing` reports
TIMING_CAPTION = ("sets: whole, or sentence-level sets drawn down; pairs: the ordered pairs behind the cells; seconds: "
                  "the scoring of this run (0: r(t, A, B) of every target of the whole sets computed once from all its "
                  "pairs, checked on a seeded sample of targets, and read back).")
MODEL_FAMILIES = ("embedding", "matching", "regression", "generation")
#: the static-embedding metrics that reduce to a cosine of two word vectors on single words
STATIC = ("embedding_average", "vector_extrema", "greedy_matching")


def label_of(suite: dict, name: str) -> str | None:
    """The label of the first metric of ``suite`` (label -> metric) with registry name ``name``, or None."""
    return next((label for label, m in suite.items() if m.name == name), None)


def metric_named(suite: dict, name: str):
    """The first metric of ``suite`` (label -> metric) with registry name ``name``, or None when none ran."""
    label = label_of(suite, name)
    return None if label is None else suite[label]


def overview(tests) -> pd.DataFrame:
    """One row per test: name, level, the categories of the targets (X / Y) and attributes (A / B), the sizes of
    the four sets and the ordered pairs the test needs."""
    from ...datasets import seat

    tests = list(tests)
    out = seat.overview(tests)
    for col in "XYAB":  # SEAT's CamelCase category names as words, so that a narrow column can wrap them
        out[col] = out[col].str.replace(r"(?<=[a-z])(?=[A-Z])", " ", regex=True)
    out.insert(2, "targets X / Y", out["X"] + " / " + out["Y"])
    out.insert(3, "attributes A / B", out["A"] + " / " + out["B"])
    out = out.drop(columns=["file", "X", "Y", "A", "B"])
    out["pairs"] = [association.pairs_needed([t]) for t in tests]
    return out


def pair_counts(full, chosen) -> dict:
    """Distinct ordered pairs one metric scores: for the full tests, before sharing pairs between tests, and for
    the tests this run uses (``chosen``: the same tests, sentence-level sets possibly drawn down); and the model
    passes a generation metric's F (a pass in each direction per pair) needs over the full tests."""
    full, chosen = list(full), list(chosen)
    return {"tests": len(full), "pairs": association.pairs_needed(full),
            "pairs_unshared": sum(association.pairs_needed([t]) for t in full),
            "pairs_run": association.pairs_needed(chosen),
            "tests_drawn": sum(f != c for f, c in zip(full, chosen)),
            # a generation metric's F scores an ordered pair with a sequence-to-sequence pass in each direction
            "seq2seq_passes": 2 * association.pairs_needed(full)}


def run_sizes(counts: dict) -> pd.DataFrame:
    """The sizes behind which sets run whole and which are drawn, for the appendix: from :func:`pair_counts`, the
    distinct ordered pairs per configuration over the whole tests (before and after sharing pairs between tests),
    those this run scores, and the sequence-to-sequence passes a generation metric would need (one per direction)."""
    return pd.DataFrame({"quantity": ["test-level combinations", "ordered pairs per configuration, whole tests",
                                      "the same before sharing pairs between tests",
                                      "ordered pairs per configuration, this run",
                                      "sequence-to-sequence passes per generation metric, whole tests"],
                         "count": [counts["tests"], counts["pairs"], counts["pairs_unshared"], counts["pairs_run"],
                                   counts["seq2seq_passes"]]})


def drawn_sets(drawn, *, tests_drawn: int, sample_size: int, drawn_sample_size: int,
               configurations: int | None = None, pairs: int | None = None) -> dict:
    """Which configurations run on drawn sentence-level sets, as two sentences (Markdown, no math) whose structure
    depends on the run: ``sets`` (which, and to how many texts per set) and ``power`` (what that does to the cells).

    ``drawn``: the configurations :func:`run_tests` ran on drawn sets in an otherwise whole run; ``tests_drawn``:
    the tests a chosen ``sample_size`` drew down (:func:`pair_counts`); ``configurations``: how many ran (when all
    of them are drawn, none is named); ``pairs``: the distinct ordered pairs of the whole tests, named as the reason
    a configuration is drawn (the appendix gives the sizes)."""
    if (sample_size and tests_drawn) or (drawn and len(drawn) == configurations):
        return {"sets": f"Every configuration runs on sentence-level sets drawn to {sample_size or drawn_sample_size} "
                        "texts per set "
                        "(seeded, the same positions in X and Y); word-level sets are whole.",
                "power": "Every sentence-level cell has far fewer targets than Gao & Wan's, so its permutation test "
                         "has less power, and a difference between levels is not read from these cells."}
    if drawn:
        names = ", ".join(drawn[:-1]) + (" and " if len(drawn) > 1 else "") + drawn[-1]
        reason = (": a metric that reads the two texts of a pair together, as BLEURT does, has no representation of "
                  "a text alone from which r(t, A, B) of the whole sets follows, so every ordered pair of the whole "
                  "sets would need its own score (their number is in the appendix)") if pairs else ""
        return {"sets": f"Every configuration runs on whole sets except {names}, whose sentence-level sets are "
                        f"drawn to {drawn_sample_size} texts per set (seeded, the same positions in X and Y){reason}.",
                "power": f"The sentence-level cells of {names} have fewer targets than Gao & Wan's, so their "
                         "permutation tests have less power; they enter the comparison with Gao & Wan all the same."}
    return {"sets": "Every configuration runs on whole sets.",
            "power": "Every cell has as many targets as Gao & Wan's."}


def run_tests(full, chosen, suite: dict, *, drawn_sample_size: int = 0, seed: int = 0,
              n_permutations: int = association.N_PERMUTATIONS, cache=True, packs=None) -> tuple[pd.DataFrame, list]:
    """Every test through every configuration of ``suite``: ``(results, drawn)``.

    When ``chosen`` is drawn down, every configuration runs on it. When it is whole, a configuration whose r(t, A,
    B) of the whole tests is in a verified association pack (``book/association_packs.py``; in ``packs``, default
    ``models/packs``) runs from it, and the others run on the sentence-level sets drawn down to ``drawn_sample_size``
    texts per set (0: whole, every pair scored). ``results`` adds to :func:`~metricbias.bias.association.run`'s
    columns ``sets`` (whole or drawn) and ``pairs`` (the ordered pairs behind the configuration's cells);
    ``drawn`` lists the configurations run on drawn sets in a whole run (empty when ``chosen`` is drawn).
    """
    from ...datasets import seat
    from ..association_packs import load

    full, chosen = list(full), list(chosen)
    whole = full == chosen
    records = load(full, suite, packs, cache) if whole else {}
    rest = {label: m for label, m in suite.items() if label not in records}
    tests = ([t if t.level == "word" else seat.subsample(t, drawn_sample_size, seed) for t in full]
             if whole and drawn_sample_size else chosen)
    kw = {"cache": cache, "n_permutations": n_permutations, "seed": seed}
    parts = []
    if records:
        parts.append(association.run(full, {label: suite[label] for label in records}, associations=records, **kw)
                     .assign(sets="whole", pairs=association.pairs_needed(full)))
    if rest:
        parts.append(association.run(tests, rest, **kw).assign(sets="whole" if tests == full else "drawn",
                                                               pairs=association.pairs_needed(tests)))
    results = pd.concat(parts, ignore_index=True)
    position = {(t.name, t.level): i for i, t in enumerate(full)}
    column = {label: i for i, label in enumerate(suite)}
    results = results.iloc[np.lexsort((results["metric"].map(column), results[["test", "level"]].apply(
        tuple, axis=1).map(position)))].reset_index(drop=True)
    return results, [label for label in rest if whole and tests != full]  # a chosen draw: every one, said apart


def timing(results: pd.DataFrame, n_pairs: int | None = None) -> pd.DataFrame:
    """Per metric: family, the sets it ran on and the ordered pairs behind them (:func:`run_tests`; else
    ``n_pairs``), seconds spent scoring (cache included; 0 when r came stored) and microseconds per pair scored."""
    results = results if "pairs" in results else results.assign(sets="", pairs=n_pairs)
    out = results.groupby("metric", sort=False).agg(family=("family", "first"), sets=("sets", "first"),
                                                    pairs=("pairs", "first"),
                                                    seconds=("scoring_seconds", "first")).reset_index()
    out["µs per pair"] = (out["seconds"] / out["pairs"] * 1e6).where(out["seconds"] > 0)
    return out if (out["sets"] != "").any() else out.drop(columns="sets")


def _flags(results: pd.DataFrame, alpha: float) -> pd.DataFrame:
    return results.assign(defined=results["effect_size"].notna(), significant=results["p_value"] <= alpha,
                          abs_d=results["effect_size"].abs())


def family_word(family: str) -> str:
    """A metric family as a word for a table cell ("n-gram", "static embedding", "matching", ...)."""
    from ...metrics.base import PARADIGMS

    return PARADIGMS.get(family, family).lower()


def by_level(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> pd.DataFrame:
    """Per metric (family first, as a word): cells with p <= ``alpha`` and the mean |d| of the defined cells, per
    level; headers are words ("p ≤ 0.01, word", "mean |d|, sent")."""
    flagged = _flags(results, alpha).assign(family=results["family"].map(family_word))
    wide = flagged.pivot_table(index=["family", "metric"], columns="level", values=["significant", "abs_d"],
                               aggfunc={"significant": "sum", "abs_d": "mean"}, sort=False)
    levels = list(dict.fromkeys(results["level"]))
    wide = wide.reindex(columns=pd.MultiIndex.from_product([["significant", "abs_d"], levels]))  # all-NaN kept
    wide.columns = [f"{f'p ≤ {alpha:g}' if v == 'significant' else 'mean |d|'}, {lv}" for v, lv in wide.columns]
    return wide.reset_index()


def shared_word_pairs(tests) -> dict[str, int]:
    """Per word-level test (by label): the (target, attribute) pairs that share a word, case-insensitively."""
    return {t.label: sum(bool(set(x.lower().split()) & set(a.lower().split())) for x in t.targets for a in t.attributes)
            for t in tests if t.level == "word"}


def shared_lists(tests) -> pd.DataFrame:
    """Which social word-level tests share words (:data:`metricbias.datasets.seat.BASELINE_TESTS` left out): one
    row per pair of tests, with the target words (X ∪ Y) and attribute words (A ∪ B) they share and each test's
    number of target words. Tests that share words are not independent units of a test over tests."""
    from itertools import combinations

    from ...datasets.seat import BASELINE_TESTS

    social = [t for t in tests if t.level == "word" and t.name not in BASELINE_TESTS]
    rows = []
    for s, t in combinations(social, 2):
        targets_s, targets_t = set(s.x) | set(s.y), set(t.x) | set(t.y)
        rows.append({"test": s.name, "other": t.name, "shared targets": len(targets_s & targets_t),
                     "targets": len(targets_s), "other targets": len(targets_t),
                     "shared attributes": len((set(s.a) | set(s.b)) & (set(t.a) | set(t.b)))})
    return pd.DataFrame(rows, columns=["test", "other", "shared targets", "targets", "other targets",
                                       "shared attributes"])


def shared_findings(shared: pd.DataFrame) -> dict:
    """:func:`shared_lists` in numbers: ``pairs`` of social tests, ``sharing`` (pairs with a shared target or
    attribute word), ``same_targets`` (pairs with the same target words, "C4-N and C5-N, …"; "none"),
    ``partial`` (pairs sharing some target words but not all) and ``most_partial`` (those sharing the most, with
    the count: "C3-N and C4-N, C3-N and C5-N (11 target words)"; "none")."""
    same = (shared["shared targets"] == shared["targets"]) & (shared["targets"] == shared["other targets"])
    partial = shared[(shared["shared targets"] > 0) & ~same]
    top = partial[partial["shared targets"] == partial["shared targets"].max()] if len(partial) else partial
    most = int(top["shared targets"].iloc[0]) if len(top) else 0
    return {"pairs": len(shared),
            "sharing": int(((shared["shared targets"] > 0) | (shared["shared attributes"] > 0)).sum()),
            "same_targets": ", ".join(f"{r.test} and {r.other}" for r in shared[same].itertuples()) or "none",
            "partial": len(partial),
            "most_partial": (", ".join(f"{r.test} and {r.other}" for r in top.itertuples())
                             + f" ({most} target word{'' if most == 1 else 's'})") if len(top) else "none"}


def ngram_control(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> pd.DataFrame:
    """The n-gram metrics per level: tests, undefined cells (constant r), the largest |d| and cells with p <= alpha."""
    ngram = _flags(results[results["family"] == "ngram"], alpha)
    return ngram.groupby(["metric", "level"], sort=False).agg(
        tests=("test", "size"), undefined=("defined", lambda s: int((~s).sum())),
        max_abs_d=("abs_d", "max"), significant=("significant", "sum")).reset_index().rename(
        columns={"undefined": "undefined d", "max_abs_d": "largest |d|", "significant": f"p ≤ {alpha:g}"})


def ngram_findings(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> dict:
    """The n-gram control in numbers: undefined word-level cells, the largest sentence-level |d| (where only the
    templates overlap), chrF's largest |d|, and the metrics whose d is defined on some word-level test."""
    ngram = _flags(results[results["family"] == "ngram"], alpha)
    word = ngram[ngram["level"] == "word"]
    sent = ngram[(ngram["level"] != "word") & ngram["defined"]]
    words_only = ngram[ngram["name"] != "chrf"]
    w = words_only[words_only["level"] == "word"]
    sn = words_only[(words_only["level"] != "word") & words_only["defined"]]
    chrf = ngram[ngram["name"] == "chrf"]
    exceptions = word[word["defined"]].groupby("metric", sort=False)["test"].apply(list)
    top = sent.loc[sent["abs_d"].idxmax()] if len(sent) else None
    return {
        "word_cells": len(word), "word_undefined": int((~word["defined"]).sum()),
        "word_tests": int(word["test"].nunique()),
        "word_defined_metrics": joined(f"{m}'s, on {of_all(t, list(word['test'].unique()), 'tests')}"
                                       for m, t in exceptions.items()),
        "sent_cells": len(sent), "sent_significant": int(sent["significant"].sum()),
        "sent_max_abs_d": float(top["abs_d"]) if top is not None else np.nan,
        "sent_max_where": f"{top['metric']} on {top['test']} {top['level']}" if top is not None else "",
        "words_only_word_cells": len(w), "words_only_word_undefined": int((~w["defined"]).sum()),
        "words_only_undefined_phrase": _share_of_cells(int((~w["defined"]).sum()), len(w), "word-level cells"),
        "words_only_sent_max_abs_d": float(sn["abs_d"].max()) if len(sn) else np.nan,
        "chrf_max_abs_d": float(chrf["abs_d"].max()) if len(chrf) else np.nan,
    }


def _share_of_cells(k: int, n: int, noun: str) -> str:
    """``k`` of ``n`` cells as a phrase: "all 162 word-level cells", "150 of the 162 word-level cells", "none of
    the 162 …"; of one cell, "the one …" or "no …"."""
    if n == 1:
        return f"{'the one' if k else 'no'} {noun[:-1]}"
    return f"all {n:,} {noun}" if k == n else f"none of the {n:,} {noun}" if k == 0 else f"{k:,} of the {n:,} {noun}"


def aligned_similarities(metric, x, y, *, cache=True) -> pd.DataFrame:
    """S(x, y) of a metric for aligned lists of texts (columns x, y, S); S is empty when ``metric`` is None."""
    frame = pd.DataFrame({"x": list(x), "y": list(y)})
    frame["S"] = association.similarity(metric, frame["x"], frame["y"], cache=cache).diagonal() if metric is not None \
        else np.nan
    return frame


def matched_word_pairs(tests, metric, *, cache=True) -> pd.DataFrame | None:
    """Word-level (target, attribute) pairs that ``metric`` scores above its no-match baseline (the smallest S
    of the test), e.g. METEOR's stem and synonym matches; columns test, target, target_set, attribute,
    attribute_set, S. None when ``metric`` is None (it did not run)."""
    if metric is None:
        return None
    frames = []
    for t in tests:
        if t.level == "word":
            sim = association.similarity_frame(t, metric, cache=cache)
            frames.append(sim[sim["S"] > sim["S"].min() + 1e-9].assign(test=t.name))
    columns = ["test", "target", "target_set", "attribute", "attribute_set", "S"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def vector_coverage(tests, metric) -> pd.DataFrame:
    """Per word-level test: targets and attributes, and how many of them a static-embedding ``metric`` has a
    vector for (at least one in-vocabulary token); no rows when ``metric`` is None (it did not run)."""
    columns = ["test", "level", "targets", "targets with a vector", "attributes with a vector"]
    if metric is None:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame([{"test": t.name, "level": t.level, "targets": len(t.targets),
                          "targets with a vector": sum(bool(metric.tokens(x)) for x in t.targets),
                          "attributes with a vector": sum(bool(metric.tokens(a)) for a in t.attributes)}
                         for t in tests if t.level == "word"], columns=columns)


def static_spread(results: pd.DataFrame, tests) -> pd.DataFrame:
    """The three static-embedding metrics on the word-level tests whose texts are single words, where each reduces
    to the cosine of two word vectors: one row per test, their d side by side and the spread (largest minus
    smallest); no rows unless all three ran."""
    single = [t.name for t in tests if t.level == "word"
              and all(len(x.split()) == 1 for x in (*t.targets, *t.attributes))]
    static = results[results["name"].isin(STATIC) & results["test"].isin(single) & (results["level"] == "word")]
    if static["name"].nunique() != len(STATIC):
        return pd.DataFrame(columns=["test", *STATIC, "spread"])
    wide = static.pivot(index="test", columns="name", values="effect_size")[list(STATIC)]
    return wide.assign(spread=wide.max(axis=1) - wide.min(axis=1)).reindex(
        [n for n in single if n in wide.index]).reset_index()


def direction(results: pd.DataFrame, alpha: float = SIGNIFICANCE) -> dict:
    """The defined cells of the model-based metrics: how many, the share with d > 0 (the direction of the
    stereotype the test encodes) and how many have p <= ``alpha``."""
    model = results[results["family"].isin(MODEL_FAMILIES)].dropna(subset=["effect_size"])
    return {"model_cells": len(model), "model_positive_share": float((model["effect_size"] > 0).mean()),
            "model_significant": int((model["p_value"] <= alpha).sum())}


def identical_findings(identical: pd.DataFrame, results: pd.DataFrame) -> dict:
    """The configurations counted once (:func:`metricbias.bias.association.merge_identical`'s table): how many
    merge with another (``identical``; the table names them, and so do their labels); and, among those left
    (``results``), the two closest (:func:`metricbias.bias.association.nearest_configurations`): ``nearest`` ("A and
    B", "—" with fewer than two), ``nearest_gap`` (their largest |d1 - d2|), ``nearest_equal`` and ``nearest_cells``
    (cells with the same d, of those both define)."""
    from ..display import UNDEFINED

    near = association.nearest_configurations(results)
    return {"identical": len(identical),
            "nearest": f"{near['metric']} and {near['other']}" if near else UNDEFINED,
            "nearest_gap": near.get("largest_difference", float("nan")), "nearest_equal": near.get("cells_equal", 0),
            "nearest_cells": near.get("cells", 0)}


def identical_sentence(identical: pd.DataFrame) -> str:
    """What merging identical configurations (:func:`metricbias.bias.association.merge_identical`'s table) did, as
    the page's sentence: "No two configurations compute the same function on these tests." when none merged,
    otherwise how many merged into another ("1 configuration computes the same function as another on these tests
    and is merged into it.")."""
    n = len(identical)
    if not n:
        return "No two configurations compute the same function on these tests."
    return (f"{counted(n, 'configuration')} {'computes' if n == 1 else 'compute'} the same function as another on "
            f"these tests and {'is' if n == 1 else 'are'} merged into it.")


def printed_alike(table: pd.DataFrame, results: pd.DataFrame, decimals: int = 2) -> dict:
    """Configurations that a per-metric page ``table`` (:func:`by_level`) prints alike, every value rounded to
    ``decimals``, though they are not merged: ``printed_alike`` ("A and B (0.031)": each pair with its largest
    |d1 - d2| over the cells of ``results`` both define; "none") and ``printed_alike_gap`` (the largest of those; NaN
    when none)."""
    values = table.drop(columns=[c for c in ("family", "metric") if c in table.columns]).astype(float).round(decimals)
    keys = [tuple(np.nan_to_num(v, nan=np.inf)) for v in values.to_numpy()]
    pairs = [(table["metric"].iloc[j], table["metric"].iloc[i]) for j in range(len(keys)) for i in range(j)
             if keys[i] == keys[j]]
    d = results.pivot_table(index=["test", "level"], columns="metric", values="effect_size", aggfunc="first")
    pairs = [(a, b) for a, b in pairs if a in d and b in d]
    gaps = [float((d[a] - d[b]).abs().max()) for a, b in pairs]
    return {"printed_alike": "; ".join(f"{b} and {a} ({g:.3f})" for (a, b), g in zip(pairs, gaps)) or "none",
            "printed_alike_gap": max(gaps) if gaps else float("nan")}


#: the most pairs a drawn test may need in full to be rerun whole by :func:`sampling_check`
SAMPLING_CHECK_MAX_PAIRS = 70_000
#: what the table of :func:`sampling_check` shows
SAMPLING_CHECK_CAPTION = (f"The drawn sentence-level tests that need at most {SAMPLING_CHECK_MAX_PAIRS:,} pairs in full, "
                          "through the embedding average, on the whole sets and on the drawn ones. p ≤: no sampled "
                          "partition as extreme as the data (the test's floor).")


def sampling_check(full, drawn, suite: dict, *, name: str = "embedding_average",
                   max_pairs: int = SAMPLING_CHECK_MAX_PAIRS,
                   cache=True, n_permutations: int = association.N_PERMUTATIONS, seed: int = 0) -> pd.DataFrame:
    """Run the drawn-down tests (``drawn``, beside the whole ``full``) that are cheap in full (at most ``max_pairs``
    pairs) both ways with the metric of ``suite`` named ``name`` (a fast one): the full-set effect sizes and
    p-values beside the sampled ones.

    Empty when nothing was drawn or that metric did not run; ``metric`` says which label was used.
    """
    label = label_of(suite, name)
    pairs = [(f, d) for f, d in zip(full, drawn) if f != d and association.pairs_needed([f]) <= max_pairs]
    if label is None or not pairs:
        return pd.DataFrame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole, part = (association.run([p[i] for p in pairs], {label: suite[label]}, cache=cache,
                                       n_permutations=n_permutations, seed=seed) for i in (0, 1))
    return whole.merge(part, on=["test", "level"], suffixes=(" full", " sampled"))[
        ["test", "level", "n_targets full", "n_targets sampled", "effect_size full", "effect_size sampled",
         "p_value full", "p_value sampled"]].assign(metric=label)


def as_text(values: dict, decimals: int = 2) -> dict:
    """``values`` with every float as the page writes it in a sentence: ``decimals`` decimals, "—" where undefined
    (NaN: a level or metric the run does not have); other values unchanged."""
    from ..display import UNDEFINED

    return {k: (UNDEFINED if np.isnan(v) else f"{v:.{decimals}f}") if isinstance(v, float) else v
            for k, v in values.items()}


__all__ = ["COMMAND_LINE", "MODEL_FAMILIES", "SAMPLING_CHECK_CAPTION", "SAMPLING_CHECK_MAX_PAIRS", "SIGNIFICANCE",
           "TIMING_CAPTION", "STATIC", "aligned_similarities", "as_text", "by_level", "direction",
           "drawn_sets", "family_word", "identical_findings", "identical_sentence", "label_of", "matched_word_pairs",
           "metric_named",
           "ngram_control", "ngram_findings", "overview", "pair_counts", "printed_alike", "run_tests", "sampling_check", "shared_findings",
           "shared_lists", "shared_word_pairs",
           "static_spread", "timing", "vector_coverage"]
