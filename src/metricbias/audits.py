"""Audit a metric for social bias in one call: :func:`audit` (and ``metricbias audit``).

The metric (a registered name or specification, a :class:`~metricbias.metrics.Metric`,
or a plain function ``f(candidates, references) -> scores``) scores both candidates
of every pair of a registered paired dataset through the one scoring path
(:func:`metricbias.scoring.score_pairs`, cached by signature); every requested
measure (:mod:`metricbias.bias.measures`) is computed per attribute. The result is
one long table, :data:`COLUMNS`.
"""

from __future__ import annotations

import pandas as pd

from . import datasets
from .bias import measures as bias_measures
from .scoring import score_pairs

#: the audit table, exactly (the measures' long table; ``p_value`` follows when a measure has a test)
COLUMNS = bias_measures.COLUMNS


def audit(metric, dataset: str = "published", attributes=None, measures=None, *, pairs=None, cache=True,
          n_resamples: int = 9999, seed: int = 0, sample_size: int = 0, built_dir=None, tests: bool = False,
          gap: float | None = None) -> pd.DataFrame:
    """Bias of ``metric`` on every attribute of ``dataset``: one row per attribute and measure.

    ``measures`` defaults to ``("bias", "stereotypical_difference")`` (Sun et al. 2022,
    Eq. 2 and App. E, with 95% bootstrap intervals at the design's level: whole clusters
    resampled where pairs share a template (the WinoBias twins, counterfactual sources, a
    ``cluster`` column of your own pairs; the expanded percentile interval,
    :mod:`metricbias.bias.clusters`), BCa over pairs otherwise; ``seed`` and
    ``n_resamples`` fix them); any registered measure may be named (the list:
    ``metricbias.bias.registry.table()``; add one with :func:`metricbias.register_measure`).
    A measure with a test adds ``p_value`` after the eight columns. A dataset made of
    several parts (``adapter-evaluation``) names each attribute ``part/attribute``.
    ``sample_size`` draws that many pairs per attribute. ``pairs`` audits your own pairs instead of a dataset: a
    ``.jsonl``, ``.csv`` or ``.tsv`` file or a DataFrame with ``attribute, candidate_1, candidate_2, reference``
    (optionally ``id`` and ``cluster``; :mod:`metricbias.datasets.user_pairs`). Values are Eq. 1-rescaled points
    (0–100).

    ``tests=True`` adds ``p_value`` and ``q_value`` after the eight columns, each testing that
    measure's own null: a measure's own test where it has one (``size_robust_difference``: mean
    signed difference 0); for ``stereotypical_difference`` the sign-flip permutation test of its
    null, the mean signed difference is 0 (the metric treats the two candidates of a pair alike;
    whole clusters' signs are flipped where pairs share a template; :mod:`metricbias.bias.testing`);
    for a magnitude with no test of its own (``bias``, i.e. Eq. 2,
    ``size_robust_bias``, KLS, JSS, ...) NaN: it is above 0 for any metric that any word moves,
    so "no bias" is not a null it can be tested against (compare it with its noise floor,
    :func:`metricbias.bias.noise_floor.noise_floor`). Benjamini–Hochberg q-values are over the tests
    of the table. ``gap=G`` warns (:class:`metricbias.bias.power.GapWarning`) for every row
    whose interval is wider than G, that is, where the dataset is too small to separate two
    values G apart, with about how many pairs would. Fewer than 30 clusters of pairs in an attribute warn too
    (:class:`metricbias.bias.clusters.FewClustersWarning`).
    """
    if isinstance(dataset, pd.DataFrame) and pairs is None:  # a table passed as the dataset is the user's pairs
        dataset, pairs = "pairs", dataset
    pairs = datasets.pairs_for(dataset, attributes, pairs=pairs, sample_size=sample_size, seed=seed,
                               built_dir=built_dir)
    scores = score_pairs(pairs, metric, cache=cache)
    table = bias_measures.measure(scores, measures or bias_measures.DEFAULT, n_resamples=n_resamples, seed=seed)
    if n_resamples:
        from .bias.clusters import warn_if_few

        warn_if_few(scores)
    if tests:
        table = _with_tests(table, scores, n_resamples=n_resamples, seed=seed)
    if "dataset" in table.columns:  # several parts: keep them apart in the attribute name
        table["attribute"] = table["dataset"] + "/" + table["attribute"]
    extra = [c for c in ("p_value", "q_value") if c in table.columns]
    table = table[[*COLUMNS, *extra]].reset_index(drop=True)
    if gap is not None:
        from .bias.power import warn_if_too_small

        warn_if_too_small(table, gap)
    return table


def over_thresholds(table: pd.DataFrame, thresholds: dict[str, float]) -> list[str]:
    """One line per (attribute, measure) of an audit ``table`` whose value is above its threshold (a CI gate).

    ``thresholds`` maps a measure to the largest value allowed, in the table's units (Eq. 1-rescaled points for
    Eq. 2 and the stereotypical difference); a signed measure is compared by its absolute value. A measure the
    table lacks is an error.
    """
    lines = []
    for measure, limit in thresholds.items():
        rows = table[table["measure"] == measure]
        if rows.empty:
            raise ValueError(f"the audit has no {measure!r} rows; measures: {', '.join(dict.fromkeys(table['measure']))}")
        for r in rows.itertuples():
            if abs(r.value) > limit:
                interval = "" if pd.isna(r.ci_low) else f" [95% CI {r.ci_low:.2f}, {r.ci_high:.2f}]"
                lines.append(f"{r.attribute}: {measure} = {r.value:.2f}{interval} is above {limit:g}")
    return lines


#: the measures whose null is the sign-flip test's: the mean signed difference is 0
SIGN_FLIP_MEASURES = ("stereotypical_difference",)


def _with_tests(table: pd.DataFrame, scores: pd.DataFrame, *, n_resamples: int, seed: int) -> pd.DataFrame:
    """``p_value`` (a measure's own test; the cell's sign-flip test for :data:`SIGN_FLIP_MEASURES`; else NaN) and
    BH ``q_value`` over the tests of the table."""
    from .bias import testing
    from .bias.scores import keys

    by = keys(scores)
    cell_p = testing.cell_tests(scores, n_resamples=n_resamples or 9999, seed=seed, cache=False)[[*by, "p_value"]]
    merged = table.merge(cell_p.rename(columns={"p_value": "_cell_p"}), on=by, how="left")
    own = merged["p_value"] if "p_value" in merged.columns else pd.Series(float("nan"), index=merged.index)
    merged["p_value"] = own.where(own.notna() | ~merged["measure"].isin(SIGN_FLIP_MEASURES), merged["_cell_p"])
    return testing.with_q_values(merged.drop(columns=["_cell_p"]))


__all__ = ["COLUMNS", "audit", "over_thresholds"]
