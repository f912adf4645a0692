"""Datasets: loaders of released data and builders of paired-candidate sets.

Every paired dataset loads by name into one pair layout: ``datasets.load("published")``
(see :mod:`metricbias.datasets.schema` for the layout and :func:`names` for the datasets).
"""

from .registry import DatasetNameError, attributes, load, names, pairs_for, register, sample
from .schema import PAIR_COLUMNS

__all__ = ["PAIR_COLUMNS", "DatasetNameError", "attributes", "load", "names", "pairs_for", "register", "sample"]
