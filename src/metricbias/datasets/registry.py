"""One registry of paired datasets, each loading into the one pair layout (:mod:`.schema`).

Every paired-candidate dataset loads by name, ``load("published")``, into a
table with one row per pair (:data:`~metricbias.datasets.schema.PAIR_COLUMNS`).
:func:`register` adds a dataset (a fork of the book registers its own the same
way); :func:`sample` draws at most ``n`` pairs per (dataset, attribute).
"""

from __future__ import annotations

from dataclasses import dataclass
import difflib
from pathlib import Path
from typing import Callable

import pandas as pd

from ..paths import check_input
from .schema import conform


class DatasetNameError(ValueError):
    """An unknown dataset name."""


@dataclass(frozen=True)
class PairDataset:
    name: str
    description: str
    #: ``loader(attributes, built_dir) -> frame`` (attributes: list or None = all)
    loader: Callable
    #: ``attributes() -> list[str]``: what ``attributes=None`` loads
    attributes: Callable
    #: True when the loader draws ``sample_size`` itself (its unit is not a pair)
    samples_itself: bool = False


DATASETS: dict[str, PairDataset] = {}


def register(name: str, *, description: str, attributes: Callable, samples_itself: bool = False,
             replace: bool = False):
    """Decorator: register ``loader(attributes, built_dir, **kw) -> pair frame`` as dataset ``name``."""
    def add(loader):
        if name in DATASETS and not replace:
            raise DatasetNameError(f"dataset {name!r} is already registered")
        DATASETS[name] = PairDataset(name, description, loader, attributes, samples_itself)
        return loader

    return add


def names() -> list[str]:
    return list(DATASETS)


def get(name: str) -> PairDataset:
    if not isinstance(name, str):
        raise DatasetNameError(f"a dataset is named by a string, not a {type(name).__name__}; to audit your own "
                               "pairs pass them as pairs=FRAME_OR_FILE (--pairs FILE)")
    if name not in DATASETS:
        hint = ("; to audit your own pairs pass --pairs FILE (pairs=...)"
                if Path(name).suffix.lower() in (".jsonl", ".json", ".csv", ".tsv", ".txt") else "")
        close = difflib.get_close_matches(name, list(DATASETS), n=3)
        if close and not hint:
            hint = f"; did you mean {' or '.join(map(repr, close))}?"
        raise DatasetNameError(f"unknown dataset {name!r}; datasets: {', '.join(DATASETS)}{hint}")
    return DATASETS[name]


def attributes(name: str) -> list[str]:
    """The attributes dataset ``name`` loads by default."""
    return list(get(name).attributes())


def load(name: str, attributes=None, *, sample_size: int = 0, seed: int = 0, built_dir=None) -> pd.DataFrame:
    """The pairs of dataset ``name`` in the pair layout, optionally ``sample_size`` per (dataset, attribute).

    ``attributes``: a list or a comma-separated string (default: all of the dataset's);
    ``built_dir``: where the built datasets are read from (default ``data/built``).
    """
    if built_dir is not None:  # a missing folder is an error, never the default pairs
        check_input(built_dir, "built_dir", kind="folder")
    dataset = get(name)
    if isinstance(attributes, str):
        attributes = [a.strip() for a in attributes.split(",") if a.strip()]
    if isinstance(sample_size, bool) or not isinstance(sample_size, int) or sample_size < 0:
        raise ValueError(f"sample_size must be a whole number >= 0, not {sample_size!r}")
    kwargs = {"sample_size": sample_size, "seed": seed} if dataset.samples_itself else {}
    frame = dataset.loader(attributes, Path(built_dir) if built_dir is not None else None, **kwargs)
    pairs = conform(frame, f"dataset {name}")
    return sample(pairs, sample_size, seed) if sample_size and not dataset.samples_itself else pairs


def pairs_for(dataset: str = "published", attributes=None, *, pairs=None, sample_size: int = 0, seed: int = 0,
              built_dir=None) -> pd.DataFrame:
    """The pairs an audit measures: the user's own when ``pairs`` is given (a ``.jsonl``, ``.csv`` or ``.tsv`` file
    or a DataFrame, :func:`metricbias.datasets.user_pairs.load_pairs`), else the registered ``dataset``'s
    (:func:`load`); ``attributes`` keeps some of them, ``sample_size`` draws that many pairs per attribute."""
    if pairs is None:
        return load(dataset, attributes, sample_size=sample_size, seed=seed, built_dir=built_dir)
    from .user_pairs import load_pairs

    frame = load_pairs(pairs)
    if isinstance(attributes, str):
        attributes = [a.strip() for a in attributes.split(",") if a.strip()]
    if attributes:
        unknown = sorted(set(attributes) - set(frame["attribute"]))
        if unknown:
            raise DatasetNameError(f"the pairs have no attribute {', '.join(map(repr, unknown))}; their attributes: "
                                   f"{', '.join(dict.fromkeys(frame['attribute']))}")
        frame = frame[frame["attribute"].isin(attributes)].reset_index(drop=True)
    return sample(frame, sample_size, seed)


def sample(pairs: pd.DataFrame, sample_size: int, seed: int = 0) -> pd.DataFrame:
    """At most ``sample_size`` pairs per (dataset, attribute), drawn with ``seed``, kept in their original order."""
    if not sample_size:
        return pairs
    parts = [group.sample(n=min(sample_size, len(group)), random_state=seed).sort_index()
             for _, group in pairs.groupby(["dataset", "attribute"], sort=False)]
    return pd.concat(parts).reset_index(drop=True)


# --- the registered datasets ---------------------------------------------------------------------

def _published_attributes():
    from .published import ATTRIBUTES

    return ATTRIBUTES


@register("published", description="the six datasets released by Sun et al. (2022), each row's own reference",
          attributes=_published_attributes)
def _published(attributes, built_dir):
    from . import published

    return published.pairs(attributes)


def _built_attributes():
    from .lexicons import attributes

    return attributes()


@register("built", description="the pairs chapter 2 builds from WinoBias, CrowS-Pairs and StereoSet",
          attributes=_built_attributes)
def _built(attributes, built_dir):
    from . import built

    return built.load(attributes, folder=built_dir)


@register("matched", description="the released pairs that chapter 2 also builds, scored against the built reference "
          "(dataset built) and against their released references (dataset released)", attributes=_published_attributes)
def _matched(attributes, built_dir):
    from . import built

    return built.matched_pairs(attributes)


def _counterfactual_attributes():
    from .counterfactuals import config

    return list(config())


@register("counterfactual", description="multi-group counterfactuals of the built pairs (chapter 4): every pair "
          "of protected groups of a source, its original pair and its neutral reference", samples_itself=True,
          attributes=_counterfactual_attributes)
def _counterfactual(attributes, built_dir, *, sample_size: int = 0, seed: int = 0):
    from . import counterfactuals

    rows, _ = counterfactuals.build_attributes(attributes, sample_size=sample_size, seed=seed, built_dir=built_dir)
    return counterfactuals.as_pairs(rows)


#: built attributes not used to evaluate debiasing adapters, and why
ADAPTER_EXCLUDED = {"stereoset_gender": "StereoSet gender examples are in the adapters' training data"}


def _adapter_attributes():
    return list(dict.fromkeys([*_published_attributes(), *(a for a in _built_attributes()
                                                           if a not in ADAPTER_EXCLUDED)]))


@register("adapter-evaluation", description="the bias sets debiasing adapters are evaluated on (chapter 6): every "
          "published attribute and every built one except those in the adapters' training data",
          attributes=_adapter_attributes)
def _adapter_evaluation(attributes, built_dir):
    published = [a for a in _published_attributes() if attributes is None or a in attributes]
    built = [a for a in _built_attributes() if a not in ADAPTER_EXCLUDED and (attributes is None or a in attributes)]
    frames = ([_published(published, built_dir)] if published else []) + ([_built(built, built_dir)] if built else [])
    if not frames:
        raise ValueError(f"dataset adapter-evaluation has none of the attributes {attributes}; it has "
                         f"{', '.join(_adapter_attributes())}")
    return pd.concat(frames, ignore_index=True)
