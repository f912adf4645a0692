"""The metric registry: stable names -> metric classes, and a user's own metrics.

Built-in metrics are listed by name and module (:data:`BUILTIN`) and imported on
first use, so that listing them never imports torch. A user adds a metric with
:func:`register`: either a :class:`~metricbias.metrics.base.Metric` subclass or a
plain function ``f(candidates, references) -> scores``; both are then used by
name everywhere (``metrics.get``, ``score_pairs``, ``mb.audit``, the CLI).

A metric *specification* names a metric and its options in one string, the syntax
every command takes::

    bleu                                   # defaults
    bleu:tokenize=13a                      # one option
    bertscore:backbone=all-MiniLM-L6-v2:layer=5
    mymodule:myfunction                    # a function (or a metric object) in an importable module

:func:`parse` turns it into a :class:`Spec` ``(label, name, options)``; values are
typed by the option's declared type (``5`` -> 5, ``true`` -> True, ``none`` -> None).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import inspect
from typing import Callable, NamedTuple

import numpy as np

from .base import Metric, MetricError

#: built-in registry name -> module that defines it (the class whose ``name`` attribute matches)
BUILTIN: dict[str, str] = {
    # n-gram overlap
    "bleu": "metricbias.metrics.ngram",
    "rouge1": "metricbias.metrics.ngram",
    "rouge2": "metricbias.metrics.ngram",
    "rougeL": "metricbias.metrics.ngram",
    "rougeSU4": "metricbias.metrics.ngram",
    "meteor": "metricbias.metrics.ngram",
    "nist": "metricbias.metrics.ngram",
    "chrf": "metricbias.metrics.ngram",
    "ter": "metricbias.metrics.ngram",
    "cider": "metricbias.metrics.ngram",
    # static word embeddings
    "wmd": "metricbias.metrics.embedding",
    "embedding_average": "metricbias.metrics.embedding",
    "vector_extrema": "metricbias.metrics.embedding",
    "greedy_matching": "metricbias.metrics.embedding",
    # token matching on contextual encoders
    "bertscore": "metricbias.metrics.matching",
    "moverscore": "metricbias.metrics.matching",
    # learned regression (BLEURT-style)
    "regression": "metricbias.metrics.regression",
    # generation likelihood and distilled metrics
    "bartscore": "metricbias.metrics.generation",
    "prism": "metricbias.metrics.generation",
    "frugalscore": "metricbias.metrics.generation",
}

#: metrics registered at run time (user classes and functions)
_REGISTERED: dict[str, type[Metric]] = {}


def names() -> list[str]:
    """Every registered name: the built-in ones, then the user's."""
    return [*BUILTIN, *(n for n in _REGISTERED if n not in BUILTIN)]


def metric_class(name: str) -> type[Metric]:
    """The class registered as ``name``."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in BUILTIN:
        close = difflib.get_close_matches(str(name), names(), n=3)
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise MetricError(f"unknown metric {name!r}; {hint}available: {', '.join(names())} "
                          "(or register your own with metricbias.metrics.register)")
    module = importlib.import_module(BUILTIN[name])
    for obj in vars(module).values():
        if isinstance(obj, type) and issubclass(obj, Metric) and obj.__dict__.get("name") == name:
            return obj
    raise MetricError(f"metric {name!r}: {BUILTIN[name]} defines no Metric subclass named {name!r}")


# --- a user's own metrics ------------------------------------------------------------------------

class FunctionMetric(Metric):
    """A plain function ``f(candidates, references) -> scores`` as a metric.

    Its signature records the function's module, name and a hash of its source
    code, so that editing the function never reuses scores cached for the old one.
    """

    family = "user"
    empty_text = "allow"
    function: Callable
    source_hash: str = "-"

    def signature_fields(self) -> dict[str, str]:
        fields = super().signature_fields()
        version = fields.pop("version")
        direction = fields.pop("direction")
        fields["function"] = f"{self.function.__module__}.{self.function.__qualname__}"
        fields["code"] = self.source_hash
        return {**fields, "direction": direction, "version": version}

    def _score(self, candidates, references):
        try:
            scores = np.asarray(self.function(list(candidates), list(references)), dtype=float)
        except (TypeError, ValueError) as exc:
            raise MetricError(f"metric {self.name}: the function {self.function.__qualname__} did not return "
                              f"numbers: {exc}") from exc
        if scores.shape != (len(candidates),):
            hint = (" (it is called once with the lists of all candidates and references, "
                    "f(candidates, references) -> one score per pair, not once per pair)" if scores.ndim == 0 else "")
            raise MetricError(f"metric {self.name}: the function returned shape {scores.shape} for "
                              f"{len(candidates)} pairs; return one score per pair{hint}")
        if not np.all(np.isfinite(scores)):
            raise MetricError(f"metric {self.name}: the function returned {int((~np.isfinite(scores)).sum())} "
                              "non-finite score(s)")
        return scores


def _source_hash(function: Callable) -> str:
    try:
        text = inspect.getsource(function)
    except (OSError, TypeError):  # built in, or defined where no source is kept
        text = f"{function.__module__}.{getattr(function, '__qualname__', repr(function))}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def function_metric(function: Callable, name: str | None = None, *, direction: str = "higher",
                    label: str | None = None, citation: str = "", packed: bool | tuple = False) -> type[Metric]:
    """A :class:`Metric` subclass that scores with ``function`` (not registered; see :func:`register`)."""
    if not callable(function):
        raise MetricError(f"a metric function must be callable, not {type(function).__name__}")
    if direction not in ("higher", "lower"):
        raise MetricError(f"direction must be 'higher' or 'lower', not {direction!r}")
    name = name or getattr(function, "__name__", None) or "function"
    name = "lambda" if name == "<lambda>" else name
    attrs = {"name": name, "label": label or name, "direction": direction, "citation": citation, "packed": packed,
             "function": staticmethod(function), "source_hash": _source_hash(function),
             "__doc__": (function.__doc__ or f"User metric {name}.").strip(), "__module__": function.__module__}
    return type(f"FunctionMetric_{name}", (FunctionMetric,), attrs)


def register(obj=None, *, name: str | None = None, direction: str = "higher", label: str | None = None,
             citation: str = "", packed: bool | tuple = False, replace: bool = False):
    """Register a metric class or a scoring function; then it is used by name everywhere.

    As a decorator: ``@register`` on a :class:`Metric` subclass (its ``name`` is the
    registry name) or on a function ``f(candidates, references) -> scores`` (the
    function's name, or ``name=``); or called: ``register(f, name="mine")``.
    ``direction`` says whether a higher or a lower score is better; ``packed``, where score packs may hold a
    function's scores (:attr:`Metric.packed`; a class declares its own). Returns what it was given.
    """
    def add(target):
        if isinstance(target, type) and issubclass(target, Metric):
            cls, key = target, name or target.__dict__.get("name")
            if not key:
                raise MetricError(f"{target.__name__} has no `name` attribute to register it under")
        else:
            if name is None and getattr(target, "__name__", "") == "<lambda>":
                raise MetricError("give a lambda a name to register it: register(f, name='mymetric')")
            cls = function_metric(target, name, direction=direction, label=label, citation=citation, packed=packed)
            key = cls.name
        if (key in BUILTIN or key in _REGISTERED) and not replace and not _same(_REGISTERED.get(key), cls):
            raise MetricError(f"metric {key!r} is already registered; pass replace=True to redefine it")
        _REGISTERED[key] = cls
        return target

    return add if obj is None else add(obj)


def _same(old: type[Metric] | None, new: type[Metric]) -> bool:
    """Re-running a notebook cell or re-importing a module registers the same metric again: not a conflict."""
    if old is None:
        return False
    if issubclass(old, FunctionMetric) and issubclass(new, FunctionMetric):
        return old.source_hash == new.source_hash
    return f"{old.__module__}.{old.__qualname__}" == f"{new.__module__}.{new.__qualname__}"


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


# --- specifications -----------------------------------------------------------------------------

class Spec(NamedTuple):
    """One metric configuration: the label tables show, the registry name, the options."""

    label: str
    name: str
    options: dict

    def build(self, **runtime) -> Metric:
        return get(self.name, **{**self.options, **runtime})

    @classmethod
    def of(cls, name: str, label: str | None = None, **options) -> "Spec":
        """The configuration ``name`` with ``options``, labelled as the metric labels it unless ``label`` is given."""
        return cls(label or metric_class(name).label_for(options), name, options)


def parse_value(text: str, expected: tuple = ()):
    """A command-line option value as the option's type: ints, floats, true/false, none, else the string."""
    low = text.strip().lower()
    if low == "none":
        return None
    if low in ("true", "false") and (not expected or bool in expected):
        return low == "true"
    for cast in (int, float):
        if expected and cast not in expected and not (cast is int and float in expected):
            continue
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _import_function(module_name: str, attr: str, text: str, what: str = "metric") -> Callable:
    """``module_name.attr``, imported from the current directory or PYTHONPATH; ``what`` names it in errors."""
    import sys
    from pathlib import Path

    cwd = str(Path.cwd())
    if cwd not in sys.path:  # `module:function` is looked up in the current directory too, like `python -m`
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MetricError(f"{what} {text!r}: cannot import module {module_name!r} from the current directory or "
                          f"PYTHONPATH ({exc})") from None
    if not hasattr(module, attr):
        raise MetricError(f"{what} {text!r}: module {module_name!r} ({getattr(module, '__file__', '?')}) has no "
                          f"attribute {attr!r}")
    return getattr(module, attr)


def parse(text: str) -> Spec:
    """``name[:key=value[:key=value...]]`` or ``module:function`` -> :class:`Spec` (label = the text)."""
    text = text.strip()
    if not text:
        raise MetricError("empty metric name")
    head, *parts = text.split(":")
    if parts and all("=" not in p for p in parts) and len(parts) == 1 and head not in names():
        function = _import_function(head, parts[0], text)
        if isinstance(function, type) and issubclass(function, Metric):
            register(function, replace=True)
            return Spec(text, function.name, {})
        cls = _object_class(function, name=text)
        register(cls, replace=True)
        return Spec(text, cls.name, {})
    cls = metric_class(head)
    options = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise MetricError(f"metric {text!r}: {part!r} is not KEY=VALUE (syntax: name:key=value:key=value)")
        if key not in cls.defaults:
            raise MetricError(f"metric {text!r}: {head} has no option {key!r}; options: {', '.join(cls.defaults)}")
        options[key] = parse_value(value, cls.option_type(key))
    return Spec(text, head, options)


def get(name, **options) -> Metric:
    """Build a metric: a registered name (or specification string), with options."""
    if isinstance(name, Metric):
        if options:
            raise MetricError("options go with a metric name, not with a built metric")
        return name
    if ":" in name:
        spec = parse(name)
        return metric_class(spec.name)(**{**spec.options, **options})
    return metric_class(name)(**options)


def resolve(metric, *, label: str | None = None) -> tuple[str, Metric]:
    """Anything that names a metric -> ``(label, Metric)``.

    Accepts a registered name or specification string (labelled as written), a
    :class:`Metric` (labelled by its configuration, e.g. ``BERTScore-MiniLM``), a
    :class:`Spec` or ``(label, name, options)`` entry, a ``(label, Metric)`` pair, a
    Metric subclass, a metric object of sacreBLEU, bert-score, sentence-transformers,
    torchmetrics or an ``evaluate``-style module (:func:`metricbias.metrics.objects.adapt`),
    or a plain function (wrapped under its name, not registered).
    """
    if isinstance(metric, Metric):
        built = metric
    elif isinstance(metric, str):
        spec = parse(metric)
        built, label = spec.build(), label or spec.label
    elif isinstance(metric, tuple) and len(metric) == 3:
        spec = Spec(*metric)
        built, label = spec.build(), label or spec.label
    elif isinstance(metric, tuple) and len(metric) == 2 and isinstance(metric[1], Metric):
        label, built = label or metric[0], metric[1]
    elif isinstance(metric, type) and issubclass(metric, Metric):
        built = metric()
    else:
        built = _object_class(metric)()
    return label or built.config_label(), built


def _object_class(obj, name: str | None = None) -> type[Metric]:
    """A metric object of another library (:mod:`.objects`), else a plain function, as a Metric class;
    anything else is an error listing what is accepted."""
    from . import objects

    if objects.adapter_for(obj) is not None:
        return objects.adapt(obj, name=name)
    if callable(obj) and not isinstance(obj, type):
        return function_metric(obj, name=name)
    return objects.adapt(obj)  # the error naming what is accepted


def on_backbones(specs, backbone_names=None) -> list[Spec]:
    """Each configuration on each given backbone it accepts (the ``--backbones`` of the commands).

    A metric without a backbone (or given none) stays as it is; a model-based metric
    that accepts none of the backbones is an error naming the kinds it takes. Labels
    are the specification's text, ``@backbone`` added.
    """
    from .. import backbones

    specs = [parse(s) if isinstance(s, str) else Spec(*s) for s in specs]
    if not backbone_names:
        return specs
    for b in backbone_names:  # an unknown name is an error of its own, listing what is available
        if _kind(backbones, b) is None:
            backbones.kind_of(b)
    out: list[Spec] = []
    for spec in specs:
        cls = metric_class(spec.name)
        if not cls.needs_backbone or "backbone" in spec.options:
            out.append(spec)
            continue
        fitting = [b for b in backbone_names if _kind(backbones, b) in cls.backbone_kinds]
        if not fitting:
            raise MetricError(f"metric {spec.name} takes {' or '.join(cls.backbone_kinds)} backbones; none of "
                              f"{', '.join(backbone_names)} is one")
        out += [Spec(f"{spec.label}@{b}", spec.name, {**spec.options, "backbone": b}) for b in fitting]
    return out


def _kind(backbones, name: str) -> str | None:
    try:
        return backbones.kind_of(name)
    except backbones.BackboneError:
        return None
