"""Score paired-candidate datasets with live metrics, through the score cache.

A pair dataset has one row per pair: ``attribute, pair_id, candidate_1, candidate_2,
reference`` and optionally ``reference_2`` (the released data keep each row's own
reference; built data share one). :func:`score_pairs` scores both candidates of every
pair with one metric and returns ``attribute, pair_id, score_1, score_2, signature``;
:func:`live_scores` does it for a list of metric configurations and returns the long
table that :func:`metricbias.bias.pairwise.bias_table` takes.

Corpus-dependent metrics (idf weights) are scored one attribute at a time, with both
candidates' rows as the corpus, as the released scores were computed one file at a
time; the others in one call over everything, so that shared texts are encoded once.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

from . import metrics as metric_registry
from .cache import ScoreCache

DATASETS = ("published", "built")
PAIR_COLUMNS = ["attribute", "pair_id", "candidate_1", "candidate_2", "reference", "reference_2"]
SCORE_COLUMNS = ["attribute", "pair_id", "score_1", "score_2", "signature"]

#: one metric configuration: (label shown in tables, registry name, options)
Entry = tuple[str, str, dict]


def dataset_available(dataset: str) -> bool:
    """Whether ``dataset`` can be loaded in this checkout (``built`` needs chapter 2's builder)."""
    if dataset == "published":
        return True
    if dataset == "built":
        import importlib.util

        return importlib.util.find_spec("metricbias.datasets.built") is not None
    raise ValueError(f"unknown dataset {dataset!r}; datasets: {', '.join(DATASETS)}")


def load_pairs(dataset: str = "published", attributes=None, *, sample_size: int = 0, seed: int = 0) -> pd.DataFrame:
    """The pairs of ``dataset`` (``published`` or ``built``), optionally ``sample_size`` per attribute."""
    if dataset == "published":
        from .datasets import published

        pairs = published.pairs(attributes)
    elif dataset == "built":
        try:
            from .datasets import built
        except ImportError as exc:
            raise ValueError("dataset 'built' is not available in this checkout (metricbias.datasets.built "
                             "is missing)") from exc
        pairs = built.load(attributes)
    else:
        raise ValueError(f"unknown dataset {dataset!r}; datasets: {', '.join(DATASETS)}")
    pairs = check_pairs(pairs, f"dataset {dataset}")
    return sample_pairs(pairs, sample_size, seed) if sample_size else pairs


def check_pairs(pairs: pd.DataFrame, what: str = "pairs") -> pd.DataFrame:
    """Validate a pair table; add ``reference_2`` = ``reference`` where it is absent."""
    missing = {"attribute", "pair_id", "candidate_1", "candidate_2", "reference"} - set(pairs.columns)
    if missing:
        raise ValueError(f"{what}: missing column(s) {sorted(missing)}")
    pairs = pairs.copy()
    if "reference_2" not in pairs.columns:
        pairs["reference_2"] = pairs["reference"]
    if pairs["pair_id"].duplicated().any():
        dup = pairs.loc[pairs["pair_id"].duplicated(), "pair_id"].iloc[0]
        raise ValueError(f"{what}: pair_id {dup!r} appears more than once")
    return pairs


def sample_pairs(pairs: pd.DataFrame, sample_size: int, seed: int = 0) -> pd.DataFrame:
    """At most ``sample_size`` pairs per attribute, drawn with ``seed``, in their original order."""
    parts = []
    for _, group in pairs.groupby("attribute", sort=False):
        n = min(sample_size, len(group))
        parts.append(group.sample(n=n, random_state=seed).sort_index())
    return pd.concat(parts).reset_index(drop=True)


def _cache(cache):
    if cache is True:
        return ScoreCache.default()
    return cache or None


def score_pairs(pairs: pd.DataFrame, metric, cache=True) -> pd.DataFrame:
    """Both candidates of every pair scored by ``metric``: ``attribute, pair_id, score_1, score_2, signature``."""
    pairs = check_pairs(pairs)
    cache = _cache(cache)
    groups = [g for _, g in pairs.groupby("attribute", sort=False)] if metric.corpus_dependent else [pairs]
    parts = []
    for group in groups:
        n = len(group)
        scores = metric.score(group["candidate_1"].tolist() + group["candidate_2"].tolist(),
                              group["reference"].tolist() + group["reference_2"].tolist(), cache=cache)
        parts.append(pd.DataFrame({"attribute": group["attribute"].to_numpy(), "pair_id": group["pair_id"].to_numpy(),
                                   "score_1": scores[:n], "score_2": scores[n:]}))
    out = pd.concat(parts, ignore_index=True)
    out["signature"] = metric.signature
    order = {pid: i for i, pid in enumerate(pairs["pair_id"])}
    return out.sort_values("pair_id", key=lambda s: s.map(order)).reset_index(drop=True)[SCORE_COLUMNS]


def live_scores(pairs: pd.DataFrame, entries: Iterable[Entry], cache=True, progress: bool = True) -> pd.DataFrame:
    """Long table ``attribute, pair_id, metric, score_1, score_2, signature`` for every entry (label in ``metric``)."""
    from .progress import tqdm

    cache = _cache(cache)
    entries = list(entries)
    parts = []
    for label, name, options in tqdm(entries, desc="metrics", disable=not progress):
        scored = score_pairs(pairs, metric_registry.get(name, **options), cache=cache)
        scored.insert(2, "metric", label)
        parts.append(scored)
    return pd.concat(parts, ignore_index=True)


def entries_for(metric_names: Sequence[str], backbone_names: Sequence[str] | None = None) -> list[Entry]:
    """Configurations for ``metricbias bias --scores live``: each metric on each given backbone it accepts.

    Metrics without a backbone ignore ``backbone_names``; a model-based metric that accepts
    none of them is an error naming the kinds it takes. Labels are ``name`` or ``name@backbone``.
    """
    from . import backbones

    out: list[Entry] = []
    for name in metric_names:
        cls = metric_registry.metric_class(name)
        if not cls.needs_backbone or not backbone_names:
            out.append((name, name, {}))
            continue
        fitting = []
        for b in backbone_names:
            try:
                kind = backbones.kind_of(b)
            except backbones.BackboneError:
                kind = "regression" if name == "regression" else None  # a trained artifact name
            if kind in cls.backbone_kinds:
                fitting.append(b)
        if not fitting:
            raise ValueError(f"metric {name} takes {' or '.join(cls.backbone_kinds)} backbones; none of "
                             f"{', '.join(backbone_names)} is one")
        out.extend((f"{name}@{b}", name, {"backbone": b}) for b in fitting)
    return out
