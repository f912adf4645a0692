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


def audit(metric, dataset: str = "published", attributes=None, measures=None, *, cache=True,
          n_resamples: int = 9999, seed: int = 0, sample_size: int = 0, built_dir=None) -> pd.DataFrame:
    """Bias of ``metric`` on every attribute of ``dataset``: one row per attribute and measure.

    ``measures`` defaults to ``("bias", "stereotypical_difference")`` (Sun et al. 2022,
    Eq. 2 and App. E, with 95% BCa bootstrap intervals over pairs; ``seed`` and
    ``n_resamples`` fix them); any registered measure may be named (the list:
    ``metricbias.bias.registry.table()``; add one with :func:`metricbias.register_measure`).
    A measure with a test adds ``p_value`` after the eight columns. A dataset made of
    several parts (``adapter-evaluation``) names each attribute ``part/attribute``.
    ``sample_size`` draws that many pairs per attribute.
    """
    pairs = datasets.load(dataset, attributes, sample_size=sample_size, seed=seed, built_dir=built_dir)
    scores = score_pairs(pairs, metric, cache=cache)
    table = bias_measures.measure(scores, measures or bias_measures.DEFAULT, n_resamples=n_resamples, seed=seed)
    if "dataset" in table.columns:  # several parts: keep them apart in the attribute name
        table["attribute"] = table["dataset"] + "/" + table["attribute"]
    return table[[*COLUMNS, *(["p_value"] if "p_value" in table.columns else [])]].reset_index(drop=True)


__all__ = ["COLUMNS", "audit"]
