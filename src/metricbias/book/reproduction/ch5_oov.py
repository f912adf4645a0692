"""Chapter 5: out-of-vocabulary words of the word-level tests, dropped (classic WEAT, the default) or
scored as zero vectors, and what that changes.
"""

from __future__ import annotations

import pandas as pd

from .gao2022 import SIGNIFICANCE


#: the static-embedding metric whose dropped words chapter 5 shows and whose tests it reruns with ``oov="zero"``
OOV_METRIC = "embedding_average"


def oov_words(tests, suite: dict, name: str = OOV_METRIC) -> pd.DataFrame:
    """The words metric ``name`` of ``suite`` cannot represent in each word-level test (dropped by default), for the
    page: test, words kept, words dropped and the dropped words of each set; empty without that metric."""
    from ...bias import association
    from .ch5_association import metric_named

    metric = metric_named(suite, name)
    words = [t for t in tests if t.level == "word"]
    cols = ["test", "targets kept", "attributes kept", "dropped", "X", "Y", "A", "B", "runs"]
    if metric is None or not words:
        return pd.DataFrame(columns=cols)
    d = association.dropped_words(words, metric)
    d = d.rename(columns={"n_targets": "targets kept", "n_attributes": "attributes kept", "n_dropped": "dropped"})
    return d.assign(runs=d["runs"].map({True: "yes", False: "no"}))[cols]


def oov_zero_run(tests, suite: dict, *, name: str = OOV_METRIC, n_permutations: int = 100_000, seed: int = 0,
                 cache=True) -> pd.DataFrame:
    """The word-level tests of ``tests`` through metric ``name`` of ``suite`` with ``oov="zero"`` (words without a
    vector kept, scored as the zero vector: the convention before classic WEAT's dropping); empty without it."""
    from ...bias import association
    from .ch5_association import label_of

    label = label_of(suite, name)
    words = [t for t in tests if t.level == "word"]
    if label is None or not words:
        return pd.DataFrame(columns=["test", "level", "metric", "effect_size", "p_value"])
    return association.run(words, {label: suite[label]}, cache=cache, n_permutations=n_permutations, seed=seed,
                           oov="zero")


def _finding(d, p, alpha: float = SIGNIFICANCE) -> str:
    if pd.isna(d):
        return "undefined"
    return f"{'positive' if d > 0 else 'negative'}{', p ≤ 0.01' if p <= alpha else ''}"


def oov_comparison(results: pd.DataFrame, zero: pd.DataFrame, alpha: float = SIGNIFICANCE) -> pd.DataFrame:
    """The word-level cells run both ways: ``test, metric, dropped, d (dropped), p (dropped), d (zero), p (zero)``
    and ``changed`` (whether the finding — undefined, or the sign of d and p ≤ ``alpha`` — differs)."""
    keys = ["test", "level", "metric"]
    both = results.merge(zero, on=keys, suffixes=("", "_zero"))
    out = pd.DataFrame({"test": both["test"], "metric": both["metric"], "words dropped": both["n_dropped"],
                        "d (dropped)": both["effect_size"], "p (dropped)": both["p_value"],
                        "d (zero)": both["effect_size_zero"], "p (zero)": both["p_value_zero"]})
    drop = [_finding(d, p, alpha) for d, p in zip(out["d (dropped)"], out["p (dropped)"])]
    zero_ = [_finding(d, p, alpha) for d, p in zip(out["d (zero)"], out["p (zero)"])]
    return out.assign(changed=[a != b for a, b in zip(drop, zero_)], finding_dropped=drop, finding_zero=zero_)


def oov_findings(comparison: pd.DataFrame) -> dict:
    """What changes between dropping out-of-vocabulary words (the default) and ``oov="zero"``: the word-level tests,
    those that lose words, those left undefined by dropping (``lost``, listed in ``lost_tests``), and among the
    tests defined both ways, the changed findings (sign of d, p <= 0.01; listed in ``changed_tests``) and the
    largest move of d (``max_move``, on ``max_move_test``). Lists read "none" when empty; ``changes`` is the verb
    phrase for a page ("changes in 1 (C8-T)", or "changes in none of them")."""
    both = comparison[comparison["d (dropped)"].notna() & comparison["d (zero)"].notna()]
    lost = comparison[comparison["d (dropped)"].isna() & comparison["d (zero)"].notna()]
    changed = both[both["changed"]]
    move = (both["d (dropped)"] - both["d (zero)"]).abs()
    return {"tests": len(comparison), "losing": int((comparison["words dropped"] > 0).sum()), "lost": len(lost),
            "lost_tests": ", ".join(lost["test"]) or "none", "defined_both": len(both), "changed": len(changed),
            "changed_tests": ", ".join(changed["test"]) or "none",
            "changes": (f"changes in {len(changed)} ({', '.join(changed['test'])})" if len(changed)
                        else "changes in none of them"),
            "max_move": float(move.max()) if len(both) else float("nan"),
            "max_move_test": str(both.loc[move.idxmax(), "test"]) if len(both) else "none"}
