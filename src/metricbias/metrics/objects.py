"""The metric objects researchers already hold, as metrics: :func:`adapt`.

One small adapter per library turns an object into a :class:`~metricbias.metrics.Metric`
subclass whose signature carries the object's settings (and, for a model, a hash of
its weights), so that the score cache never confuses two configurations:

=====================================  ==========================================================
sacreBLEU ``BLEU``, ``CHRF``, ``TER``  ``sentence_score`` per pair; sacreBLEU's own signature inside ours
``bert_score.BERTScorer``              F (or ``key="P"``/``"R"``); model, layer, idf weights, baseline
``sentence_transformers``              ``SentenceTransformer``: cosine of the two embeddings;
                                       ``CrossEncoder``: ``predict`` on (candidate, reference)
``torchmetrics`` text metric           a module (``CHRFScore()``) or a functional (``chrf_score``, or a
                                       ``functools.partial`` of one), one pair at a time
an ``evaluate``-style module           any object with ``compute(predictions=, references=)``, one pair at a time
=====================================  ==========================================================

A library is never imported here: an object is recognised by its class, looked up
among the modules already loaded (whoever holds a ``CHRF`` has imported sacreBLEU).
``key`` picks one output where the object returns several; ``direction`` says which
scores are better where the library does not (an ``evaluate`` module).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import sys
from pathlib import Path
from typing import Callable, ClassVar

import numpy as np

from .base import Metric, MetricError

#: what :func:`adapt` takes, for error messages
ACCEPTED = ("a registered name or specification", "a Metric", "a function f(candidates, references) -> scores",
            "a sacreBLEU BLEU/CHRF/TER", "a bert_score.BERTScorer", "a sentence_transformers SentenceTransformer or "
            "CrossEncoder", "a torchmetrics text metric (module or functional)",
            "an object with compute(predictions=, references=) (a Hugging Face evaluate module)")


class ObjectMetric(Metric):
    """A metric object of another library, held as ``obj``; :meth:`fingerprints` adds its ``settings``."""

    family = "user"
    empty_text = "allow"
    obj: ClassVar = None
    #: the object's settings, in the signature (after ``metric``), computed when the class is made
    settings: ClassVar[dict] = {}

    def fingerprints(self) -> dict[str, str]:
        return dict(self.settings)

    def _score(self, candidates, references):
        try:
            scores = np.asarray(self.score_object(candidates, references), dtype=float)
        except MetricError:
            raise
        except (TypeError, ValueError) as exc:
            raise MetricError(f"metric {self.name}: {type(self.obj).__name__} did not return numbers: {exc}") from exc
        if scores.shape != (len(candidates),) or not np.all(np.isfinite(scores)):
            raise MetricError(f"metric {self.name}: {type(self.obj).__name__} returned {scores.shape} scores with "
                              f"{int((~np.isfinite(scores)).sum())} non-finite for {len(candidates)} pairs")
        return scores

    def score_object(self, candidates: list[str], references: list[str]):
        """One score per pair, from ``obj`` (each adapter)."""
        raise NotImplementedError


# --- recognising a class without importing its library ---------------------------------------------

def _instance_of(obj, module: str, name: str) -> bool:
    """``isinstance(obj, module.name)`` if ``module`` is loaded (else ``obj`` cannot be one)."""
    cls = getattr(sys.modules.get(module), name, None)
    return isinstance(cls, type) and isinstance(obj, cls)


def _simple(value) -> str | None:
    """A setting's text if it is plain data (numbers, strings, their lists), else None."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return "-" if value is None else str(value)
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return ",".join(map(str, value))
    return None


def _clean(text: str) -> str:
    """A value safe inside a signature (``key:value|...``): no field separator."""
    return str(text).replace("|", ",")


def _public_settings(obj, skip=(), prefix: str = "", depth: int = 1) -> dict[str, str]:
    """The plain-data public attributes of ``obj`` (one level into plain helper objects, e.g. a tokenizer)."""
    out = {}
    for key, value in vars(obj).items():
        if key.startswith("_") or key in skip:
            continue
        text = _simple(value)
        if text is not None:
            out[prefix + key] = _clean(text)
        elif depth and hasattr(value, "__dict__") and not inspect.isroutine(value) \
                and type(value).__module__.split(".")[0] != "torch":
            out.update(_public_settings(value, prefix=f"{prefix}{key}.", depth=depth - 1))
    return out


def _hash_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _weights_hash(module) -> str:
    """Short hash of a torch module's parameters and buffers (in memory: a model need not come from a folder)."""
    h = hashlib.sha256()
    for key, tensor in sorted(module.state_dict().items()):
        h.update(key.encode() + b"\x00")
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:12]


def _model_name(path_or_id) -> str:
    """How a label names a model: a registered backbone's folder by its label, another folder by its name, a hub id
    as it is."""
    from .. import backbones

    text = str(path_or_id or "model")
    if not Path(text).exists():
        return text
    name = backbones.name_of(text)
    return backbones.BACKBONES[name].label if name else Path(text).name


def _pick(values: dict, key: str | None, what: str):
    """One output of several: ``key``, else the only number, else the only F-measure."""
    numeric = {k: v for k, v in values.items() if _scalar(v) is not None}
    if key is not None:
        if key not in values:
            raise MetricError(f"{what} has no output {key!r}; it returns {', '.join(map(str, values))}")
        return values[key]
    if len(numeric) == 1:
        return next(iter(numeric.values()))
    f = [k for k in numeric if str(k).endswith(("fmeasure", "f1", "_f"))]
    if len(f) == 1:
        return numeric[f[0]]
    raise MetricError(f"{what} returns several numbers ({', '.join(map(str, values))}); choose one with "
                      f"metricbias.metrics.adapt(obj, key=...)")


def _number(value) -> np.ndarray:
    """Scores as floats, from a torch tensor too."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=float)


def _scalar(value) -> float | None:
    """``value`` as one float, or None if it is not one number."""
    try:
        number = _number(value)
    except (TypeError, ValueError):
        return None
    return float(number) if number.size == 1 else None


# --- the adapters -----------------------------------------------------------------------------------------
# Each: accepts(obj) -> bool; describe_object(obj, key, direction) -> the class attributes of the metric (name,
# label, direction, settings and what score_object needs); score_object(candidates, references) -> scores.

class _SacreBLEU(ObjectMetric):
    libraries = ("sacrebleu",)

    @staticmethod
    def accepts(obj) -> bool:
        return _instance_of(obj, "sacrebleu.metrics.base", "Metric") and hasattr(obj, "sentence_score")

    @staticmethod
    def describe_object(obj, key, direction):
        probe = obj.sentence_score("a b c", ["a b c"])  # sacreBLEU knows the number of references once it scored
        kind = type(obj).__name__
        return {"name": f"sacrebleu.{kind}", "label": f"sacreBLEU-{probe.name}",
                "direction": direction or ("lower" if kind == "TER" else "higher"),
                "settings": {"sacrebleu": _clean(obj.get_signature().format())}}

    def score_object(self, candidates, references):
        return [self.obj.sentence_score(c, [r]).score for c, r in zip(candidates, references)]


class _BERTScorer(ObjectMetric):
    libraries = ("bert-score", "transformers", "torch")
    key: ClassVar[str] = "F"

    @staticmethod
    def accepts(obj) -> bool:
        return _instance_of(obj, "bert_score.scorer", "BERTScorer")

    @staticmethod
    def describe_object(obj, key, direction):
        key = key or "F"
        if key not in ("P", "R", "F"):
            raise MetricError(f"a BERTScorer gives P, R or F, not key={key!r}")
        idf = "-" if not obj.idf else _idf_hash(obj._idf_dict)
        baseline = "-"
        if obj.rescale_with_baseline:
            baseline = _hash_text(repr(obj.baseline_vals.tolist()))
        settings = {"model": _clean(_model_name(obj.model_type)), "layer": str(obj.num_layers),
                    "all_layers": str(obj.all_layers), "variant": key, "idf": idf, "baseline": baseline,
                    "lang": str(obj.lang or "-"), "weights": _weights_hash(obj._model)}
        return {"name": "bert_score.BERTScorer", "key": key, "direction": direction or "higher",
                "label": f"BERTScorer-{key}-{_model_name(obj.model_type)}-L{obj.num_layers}"
                         + ("-idf" if obj.idf else "") + ("-rescaled" if obj.rescale_with_baseline else ""),
                "settings": settings}

    def score_object(self, candidates, references):
        p, r, f = self.obj.score(candidates, references, verbose=False)
        return _number({"P": p, "R": r, "F": f}[self.key])


def _idf_hash(weights) -> str:
    """Short hash of BERTScore's idf weights: the default (unseen tokens) and every other weight. The dictionary
    gains an entry at the default each time scoring meets an unseen token, so those entries are left out."""
    default = weights.default_factory() if getattr(weights, "default_factory", None) else None
    return _hash_text(repr((default, sorted((k, v) for k, v in weights.items() if v != default))))


def _st_settings(obj) -> dict[str, str]:
    """A sentence-transformers model's modules (with their configuration) and weights."""
    modules = []
    for module in obj.children():
        config = module.get_config_dict() if hasattr(module, "get_config_dict") else {}
        plain = ",".join(f"{k}={_simple(v)}" for k, v in sorted(config.items()) if _simple(v) is not None)
        modules.append(f"{type(module).__name__}({plain})")
    return {"modules": _clean(";".join(modules)),
            "max_length": str(getattr(obj, "max_seq_length", None) or getattr(obj, "max_length", "-")),
            "prompt": _clean(str(getattr(obj, "default_prompt_name", None) or "-")),
            "truncate_dim": str(getattr(obj, "truncate_dim", None) or "-"), "weights": _weights_hash(obj)}


def _st_model(obj) -> str:
    """The folder or hub id a sentence-transformers model was loaded from."""
    card = getattr(obj, "model_card_data", None)
    for name in (getattr(card, "base_model", None), getattr(getattr(obj, "config", None), "_name_or_path", None)):
        if name:
            return name
    for module in obj.children():
        config = getattr(getattr(module, "auto_model", None), "config", None)
        if getattr(config, "_name_or_path", None):
            return config._name_or_path
    return type(obj).__name__


class _SentenceTransformer(ObjectMetric):
    libraries = ("sentence-transformers", "transformers", "torch")

    @staticmethod
    def accepts(obj) -> bool:
        return _instance_of(obj, "sentence_transformers", "SentenceTransformer")

    @staticmethod
    def describe_object(obj, key, direction):
        return {"name": "sentence_transformers.SentenceTransformer", "direction": direction or "higher",
                "label": f"SBERT-cos-{_model_name(_st_model(obj))}",
                "settings": {"model": _clean(_model_name(_st_model(obj))), "score": "cosine", **_st_settings(obj)}}

    def score_object(self, candidates, references):
        a = self.obj.encode(candidates, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
        b = self.obj.encode(references, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
        return np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float), axis=1)


class _CrossEncoder(ObjectMetric):
    libraries = ("sentence-transformers", "transformers", "torch")

    @staticmethod
    def accepts(obj) -> bool:
        return _instance_of(obj, "sentence_transformers", "CrossEncoder")

    @staticmethod
    def describe_object(obj, key, direction):
        if getattr(obj, "num_labels", 1) != 1:
            raise MetricError(f"a CrossEncoder with {obj.num_labels} labels gives no single score; use one with "
                              "num_labels=1")
        activation = getattr(obj, "activation_fn", None)
        return {"name": "sentence_transformers.CrossEncoder", "direction": direction or "higher",
                "label": f"CrossEncoder-{_model_name(_st_model(obj))}",
                "settings": {"model": _clean(_model_name(_st_model(obj))), "pairs": "candidate,reference",
                             "activation": type(activation).__name__ if activation is not None else "-",
                             **_st_settings(obj)}}

    def score_object(self, candidates, references):
        return np.asarray(self.obj.predict(list(zip(candidates, references)), show_progress_bar=False,
                                           convert_to_numpy=True), dtype=float).reshape(-1)


#: torchmetrics' text metrics whose target is a list of references per candidate
_MULTI_REFERENCE = ("bleu", "sacre_bleu", "chrf", "ter", "eed")
#: torchmetrics' own switches, which never change a score
_TORCHMETRICS_BASE = ("training", "compute_on_cpu", "dist_sync_on_step", "sync_on_compute", "compute_with_cache",
                      "process_group", "dist_sync_fn", "distributed_available_fn")


def _torchmetrics_function(obj) -> Callable | None:
    """The functional text metric behind ``obj`` (itself or a ``functools.partial`` of it), else None."""
    function = obj.func if isinstance(obj, functools.partial) else obj
    module = getattr(function, "__module__", "") or ""
    return function if inspect.isfunction(function) and module.startswith("torchmetrics.functional.text.") else None


class _TorchMetrics(ObjectMetric):
    libraries = ("torchmetrics", "torch")
    key: ClassVar[str | None] = None
    stem: ClassVar[str] = ""

    @staticmethod
    def accepts(obj) -> bool:
        return _instance_of(obj, "torchmetrics", "Metric") and type(obj).__module__.startswith("torchmetrics.text.") \
            or _torchmetrics_function(obj) is not None

    @staticmethod
    def describe_object(obj, key, direction):
        import importlib

        function = _torchmetrics_function(obj)
        if function is None:  # a module: its settings are its plain attributes, less torchmetrics' own and its state
            stem = type(obj).__module__.rsplit(".", 1)[-1]
            name = type(obj).__name__
            settings = _public_settings(obj, skip=(*_TORCHMETRICS_BASE, *obj._defaults))
            higher = obj.higher_is_better
        else:  # a functional: its keyword defaults, and a partial's keywords over them
            stem, name = function.__module__.rsplit(".", 1)[-1], function.__name__
            keywords = {p.name: p.default for p in inspect.signature(function).parameters.values()
                        if p.default is not inspect.Parameter.empty}
            keywords.update(obj.keywords if isinstance(obj, functools.partial) else {})
            settings = {k: _clean(_simple(v)) for k, v in keywords.items() if _simple(v) is not None}
            # the module class of the same file says which scores are better
            classes = [c for c in vars(importlib.import_module(f"torchmetrics.text.{stem}")).values()
                       if isinstance(c, type) and c.__module__ == f"torchmetrics.text.{stem}"
                       and isinstance(getattr(c, "higher_is_better", None), bool)]
            higher = classes[0].higher_is_better if len(classes) == 1 else None
        if stem in ("perplexity", "squad"):
            raise MetricError(f"torchmetrics {name} does not score a candidate against a reference")
        if direction is None and not isinstance(higher, bool):
            raise MetricError(f"torchmetrics {name} does not say whether higher is better; pass "
                              "metricbias.metrics.adapt(obj, direction='higher' or 'lower')")
        return {"name": f"torchmetrics.{name}", "label": f"torchmetrics-{name}", "key": key, "stem": stem,
                "direction": direction or ("higher" if higher else "lower"),
                "settings": {**settings, "key": str(key or "-")}}

    def score_object(self, candidates, references):
        multi = self.stem in _MULTI_REFERENCE
        out = []
        for c, r in zip(candidates, references):
            target = [[r]] if multi else [r]
            if _torchmetrics_function(self.obj) is not None:
                value = self.obj([c], target)
            else:
                self.obj.reset()
                self.obj.update([c], target)
                value = self.obj.compute()
            out.append(_scalar(_pick(value, self.key, self.name) if isinstance(value, dict) else value))
        if _torchmetrics_function(self.obj) is None:
            self.obj.reset()
        return out


class _Compute(ObjectMetric):
    key: ClassVar[str | None] = None

    @staticmethod
    def accepts(obj) -> bool:
        compute = getattr(obj, "compute", None)
        if not callable(compute) or isinstance(obj, type):
            return False
        try:
            parameters = inspect.signature(compute).parameters
        except (TypeError, ValueError):
            return False
        return "predictions" in parameters and "references" in parameters

    @staticmethod
    def describe_object(obj, key, direction):
        cls = type(obj)
        name = getattr(obj, "name", None) or cls.__name__
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):
            source = f"{cls.__module__}.{cls.__qualname__}"
        settings = {"module": _clean(f"{cls.__module__}.{cls.__qualname__}"), "code": _hash_text(source),
                    "config": _clean(str(getattr(obj, "config_name", None) or "-")), "key": str(key or "-")}
        return {"name": f"compute.{name}", "label": str(name), "key": key, "direction": direction or "higher",
                "settings": settings}

    def score_object(self, candidates, references):
        out = []
        for c, r in zip(candidates, references):
            value = self.obj.compute(predictions=[c], references=[r])
            out.append(_scalar(_pick(value, self.key, f"{self.name}.compute") if isinstance(value, dict) else value))
        return out


#: the adapters, most specific first (a torchmetrics module also has a ``compute``)
ADAPTERS = (_SacreBLEU, _BERTScorer, _SentenceTransformer, _CrossEncoder, _TorchMetrics, _Compute)


def adapter_for(obj) -> type[ObjectMetric] | None:
    """The adapter that takes ``obj``, or None."""
    return next((a for a in ADAPTERS if a.accepts(obj)), None)


def adapt(obj, *, key: str | None = None, direction: str | None = None, label: str | None = None,
          name: str | None = None) -> type[ObjectMetric]:
    """A :class:`Metric` subclass that scores with the metric object ``obj`` (see the module's table).

    ``key``: which output to use where ``obj`` returns several (a BERTScorer's ``P``/``R``/``F``, a
    dictionary's key); ``direction``: ``higher`` or ``lower``, where the library does not say;
    ``label``/``name``: how tables and the registry name it (default: from the object).
    """
    adapter = adapter_for(obj)
    if adapter is None:
        raise MetricError(f"cannot use {type(obj).__module__}.{type(obj).__qualname__} as a metric; accepted: "
                          + "; ".join(ACCEPTED))
    if direction not in (None, "higher", "lower"):
        raise MetricError(f"direction must be 'higher' or 'lower', not {direction!r}")
    found = adapter.describe_object(obj, key, direction)
    settings = found.pop("settings")
    attrs = {**found, "name": name or found["name"], "signature_name": found["name"], "label": label or found["label"],
             "obj": staticmethod(obj),
             "settings": settings, "__module__": __name__,
             "__doc__": f"{type(obj).__module__}.{type(obj).__qualname__} as a metric (metricbias.metrics.adapt)."}
    return type(f"{adapter.__name__.lstrip('_')}Metric", (adapter,), attrs)


__all__ = ["ACCEPTED", "ADAPTERS", "ObjectMetric", "adapt", "adapter_for"]
