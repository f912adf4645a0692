"""The bias-measure registry: stable names -> :class:`Measure` records, and a user's own measures.

A measure is a function of one (attribute, metric) cell of a paired score table
(:mod:`metricbias.bias.scores`). What it receives depends on what it ``takes``:

``"pairs"``
    ``f(s1, s2)``: the raw scores of candidate 1 and candidate 2, two float arrays
    aligned pair by pair (Eq. 2 of Sun et al. uses the pairing);
``"distributions"``
    ``f(x, y)``: the same two score sets, as samples whose pairing the measure
    ignores (KLS/JSS fit one Gaussian to each);
``"groups"``
    ``f(data)``: the long table ``source, group, score`` of the generalized
    fairness metrics (Czarnowska et al. 2021), one source per pair and the groups
    ``candidate_1``, ``candidate_2`` (:func:`metricbias.bias.scores.from_pairs`).

Any of the keyword arguments :data:`OPTIONS` (``n_resamples``, ``seed``,
``metric``, ``attribute``, ``clusters``) is passed when the function's signature
names it; ``clusters`` is one cluster key per pair where some pairs share a
template (:mod:`metricbias.bias.clusters`), else None. A
measure returns a float, or a dict ``{"value", "ci_low", "ci_high", "p_value"}``
(all but ``value`` optional). :func:`metricbias.bias.measures.measure` computes
every requested measure per cell, in one long table.

Built-in measures are listed by name and defining module (:data:`BUILTIN`) and
imported on first use; a user adds one with :func:`register_measure`::

    @register_measure("mean_gap", takes="pairs", citation="me", description="mean raw score gap")
    def mean_gap(s1, s2):
        return float(np.mean(s1 - s2))
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

#: what a measure may take (module docstring)
TAKES = ("pairs", "groups", "distributions")
#: keyword arguments passed to a measure whose signature names them
OPTIONS = ("n_resamples", "seed", "metric", "attribute", "clusters")
#: defaults of the bootstrap (and permutation) options every measure shares
DEFAULT_RESAMPLES = 9999
DEFAULT_SEED = 0

#: built-in measure name -> module that registers it (this order is the order of :func:`names`)
BUILTIN: dict[str, str] = {
    "bias": "metricbias.bias.pairwise",
    "stereotypical_difference": "metricbias.bias.pairwise",
    "indicator": "metricbias.bias.distributional",
    "kls": "metricbias.bias.distributional",
    "jss": "metricbias.bias.distributional",
    "group_abs": "metricbias.bias.generalized",
    "group_w1": "metricbias.bias.generalized",
    "group_mwu": "metricbias.bias.generalized",
    "counterfactual_mwu": "metricbias.bias.generalized",
    "size_robust_bias": "metricbias.bias.reliability",
    "size_robust_difference": "metricbias.bias.reliability",
}

_REGISTERED: dict[str, "Measure"] = {}


class MeasureError(ValueError):
    """A measure that cannot be registered, found or computed."""


@dataclass(frozen=True)
class Measure:
    """One registered bias measure: its function and what the tables need to know about it."""

    name: str
    function: Callable = field(repr=False)
    takes: str = "pairs"
    interval: bool = False  # returns ci_low and ci_high
    test: bool = False  # returns p_value
    citation: str = ""
    description: str = ""

    @cached_property
    def options(self) -> tuple[str, ...]:
        """The keyword arguments of :data:`OPTIONS` the function accepts."""
        params = inspect.signature(self.function).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return OPTIONS
        return tuple(o for o in OPTIONS if o in params)

    def __call__(self, *data, **context) -> dict:
        """The measure on one cell's data, as ``{"value", "ci_low", "ci_high"[, "p_value"]}`` (NaN where absent)."""
        kwargs = {k: v for k, v in context.items() if k in self.options}
        result = self.function(*data, **kwargs)
        nan = float("nan")
        if isinstance(result, dict):
            if "value" not in result:
                raise MeasureError(f"measure {self.name!r} returned a dict without 'value' (keys: {sorted(result)})")
            unknown = set(result) - {"value", "ci_low", "ci_high", "p_value"}
            if unknown:
                raise MeasureError(f"measure {self.name!r} returned unknown key(s) {sorted(unknown)}; "
                                   "a measure returns value, ci_low, ci_high, p_value")
            out = {"value": _number(self.name, result["value"]), "ci_low": _number(self.name, result.get("ci_low", nan)),
                   "ci_high": _number(self.name, result.get("ci_high", nan))}
            if self.test:
                out["p_value"] = _number(self.name, result.get("p_value", nan))
            return out
        out = {"value": _number(self.name, result), "ci_low": nan, "ci_high": nan}
        if self.test:
            out["p_value"] = nan
        return out


def _number(name: str, value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise MeasureError(f"measure {name!r} returned {type(value).__name__} {value!r}, not a number") from None


def names() -> list[str]:
    """Every registered name: the built-in ones, then the user's."""
    return [*BUILTIN, *(n for n in _REGISTERED if n not in BUILTIN)]


def get_measure(name: str) -> Measure:
    """The :class:`Measure` registered as ``name`` (built-in ones are imported on first use)."""
    if isinstance(name, Measure):
        return name
    if name not in _REGISTERED and name in BUILTIN:
        importlib.import_module(BUILTIN[name])
    if name not in _REGISTERED:
        close = difflib.get_close_matches(str(name), names(), n=3)
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise MeasureError(f"unknown bias measure {name!r}; {hint}measures: {', '.join(names())} "
                           "(or register your own with metricbias.register_measure)")
    return _REGISTERED[name]


def register_measure(name: str, function: Callable | None = None, *, takes: str = "pairs", interval: bool = False,
                     test: bool = False, citation: str = "", description: str = "", replace: bool = False):
    """Register a bias measure under ``name``; then every table computes it by name (``mb.audit(measures=[...])``).

    As a decorator, ``@register_measure("name", takes=..., ...)``, or called,
    ``register_measure("name", f, ...)``. ``takes`` says what ``f`` receives (module
    docstring); ``interval``/``test`` say whether it returns ``ci_low, ci_high`` and
    ``p_value``. A name already registered is refused unless ``replace=True``
    (re-running the same definition is no conflict). Returns the function.
    """
    if not isinstance(name, str) or not name:
        raise MeasureError(f"a measure needs a name (a non-empty string), got {name!r}")
    if takes not in TAKES:
        raise MeasureError(f"measure {name!r}: takes must be one of {', '.join(TAKES)}, not {takes!r}")

    def add(fn: Callable) -> Callable:
        if not callable(fn):
            raise MeasureError(f"measure {name!r}: {fn!r} is not a function")
        old = _REGISTERED.get(name)
        if old is not None and not replace and not _same(old.function, fn):
            raise MeasureError(f"bias measure {name!r} is already registered ({_where(old.function)}); "
                               "pass replace=True to redefine it")
        if old is None and name in BUILTIN and fn.__module__ != BUILTIN[name] and not replace:
            raise MeasureError(f"bias measure {name!r} is built in ({BUILTIN[name]}); pass replace=True to redefine it")
        _REGISTERED[name] = Measure(name, fn, takes, interval, test, citation, description)
        return fn

    return add if function is None else add(function)


def _where(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"


def _same(old: Callable, new: Callable) -> bool:
    """Re-running a notebook cell or re-importing a module registers the same function again: not a conflict."""
    if _where(old) != _where(new):
        return False
    try:
        return inspect.getsource(old) == inspect.getsource(new)
    except (OSError, TypeError):
        return old is new


def unregister_measure(name: str) -> None:
    """Forget a user's measure (tests, notebooks); built-in ones stay."""
    if name not in BUILTIN:
        _REGISTERED.pop(name, None)


def table():
    """Every registered measure (built-in ones first): ``name, takes, interval, test, citation, description``."""
    import pandas as pd

    return pd.DataFrame([{"name": m.name, "takes": m.takes, "interval": m.interval, "test": m.test,
                          "citation": m.citation, "description": m.description} for m in map(get_measure, names())])


__all__ = ["BUILTIN", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "Measure", "MeasureError", "OPTIONS", "TAKES",
           "get_measure", "names", "register_measure", "table", "unregister_measure"]
