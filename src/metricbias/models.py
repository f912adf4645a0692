"""Model loading, once per process, for every neural metric.

Every neural metric loads its weights through this module:

* :func:`load_encoder` - a contextual encoder (BERT, RoBERTa, MiniLM, ...) wrapped in
  :class:`Encoder`, which tokenizes as bert-score does and caches per-sentence
  embeddings, so that BERTScore and MoverScore on the same backbone share them;
* :func:`load_seq2seq` - a sequence-to-sequence checkpoint (BART, PRISM-style paraphrasers);
* :func:`load_sequence_regression` - a sequence-regression checkpoint (BLEURT ports, FrugalScore).

Each takes a backbone (registered name or local folder, see :mod:`metricbias.backbones`),
a device and, for encoders, an optional ``adapter`` folder. Adapters are attached by
:func:`attach_adapter`, the one place where a trained debiasing adapter meets a model;
its fingerprint is recorded in metric signatures by :func:`adapter_fingerprint`.
Nothing here reaches for the model hub: :func:`metricbias.backbones.offline_env` is set
before any ``from_pretrained``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import warnings
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from . import backbones

#: embeddings kept per encoder (sentences x layers); older ones are dropped first
EMBEDDING_CACHE_SIZE = 200_000


class ModelError(RuntimeError):
    """A model folder cannot be loaded as the kind of model a metric needs."""


def resolve_device(device: str | None = "auto") -> str:
    """``auto`` -> ``cuda`` when a GPU is visible, else ``cpu``; anything else is passed to torch."""
    if device in (None, "auto"):
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(device)


def adapter_folder(adapter) -> Path:
    """The folder of an adapter given as a folder or by the name of a shipped one (``models/<name>/``,
    then ``<cache>/trained/<name>/``, as :func:`metricbias.backbones.trained_path` looks them up)."""
    path = Path(adapter)
    if path.is_dir():
        return path
    shipped = backbones.trained_path(str(adapter)) if "/" not in str(adapter) else None
    if shipped is None:
        raise ModelError(f"adapter {adapter!r} is neither a folder nor a trained adapter in "
                         f"{' or '.join(map(str, backbones.trained_dirs(path.name)))}")
    return shipped


#: the files of an adapter folder that determine scores (adapters' save_adapter format)
ADAPTER_FILES = ("adapter_config.json", "adapter.safetensors", "pytorch_adapter.bin")


def adapter_fingerprint(adapter) -> str:
    """Short hash of an adapter's config and weights (``-`` for no adapter).

    Only :data:`ADAPTER_FILES` count: the same adapter in a training run's folder (with checkpoints)
    and shipped under ``models/`` (with its provenance, which gains figures later) scores the same.
    """
    if adapter is None:
        return "-"
    path = Path(adapter)
    if not path.is_dir():
        raise ModelError(f"adapter folder {path} does not exist")
    parts = [f"{f}:{backbones.fingerprint_path(path / f)}" for f in ADAPTER_FILES if (path / f).is_file()]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


def attach_adapter(model, adapter):
    """Load the adapter saved in folder ``adapter`` into ``model`` and activate it.

    Uses the ``adapters`` library (``adapters.init`` + ``load_adapter``), the format in
    which :mod:`metricbias.mitigation` saves debiasing adapters. An adapter already active
    in ``model`` (the task adapter of a trained regression backbone) stays active, under
    the new one: ``Stack(active, new)``. Returns the model.
    """
    import adapters as adapters_lib

    path = Path(adapter)
    if not (path / "adapter_config.json").exists():
        raise ModelError(f"adapter folder {path} has no adapter_config.json (save it with model.save_adapter)")
    device = next(model.parameters()).device
    adapters_lib.init(model)
    active = model.active_adapters
    name = model.load_adapter(str(path), use_safetensors=True)  # falls back to pytorch_adapter.bin
    stack_adapter(model, name, active)
    return model.to(device)  # the new layers are built on the CPU: join the model where it is


def stack_adapter(model, name: str, below) -> None:
    """Activate adapter ``name`` on top of the adapter setup ``below`` (``None``: alone)."""
    from adapters.composition import Stack

    if below is None:
        model.set_active_adapters(name)
    else:
        model.set_active_adapters(Stack(*(below.children if isinstance(below, Stack) else [below]), name))


def _from_pretrained(loader, path: Path, what: str, backbone: str):
    backbones.offline_env()
    try:
        return loader.from_pretrained(str(path))
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"backbone {backbone!r} at {path} cannot be loaded as {what}: {exc}") from exc


#: keep encoder embeddings on disk too (:class:`metricbias.cache.EmbeddingCache`), shared by processes;
#: ``METRICBIAS_EMBEDDING_CACHE=off`` keeps them in memory only
PERSIST_EMBEDDINGS = os.environ.get("METRICBIAS_EMBEDDING_CACHE", "on").lower() != "off"

#: slow tokenizers whose fast (Rust) counterpart gives the same ids on printable ASCII text (WordPiece);
#: other text, and other tokenizers, go through the slow one, as bert-score tokenizes
FAST_TOKENIZERS = ("BertTokenizer", "DistilBertTokenizer", "MPNetTokenizer")
_PLAIN_ASCII = re.compile(r"[\x20-\x7e\t\n\r]+")


class Encoder:
    """A contextual encoder with bert-score's tokenization and a per-sentence embedding cache.

    ``encode`` turns a sentence into token ids exactly as ``bert_score.utils.sent_encode``
    does (special tokens added, truncated to the model's maximum length);
    ``embed`` returns one ``(tokens, hidden)`` float32 CPU tensor per id list for a given
    layer (0 = embeddings output, ``num_layers`` = last layer), computing each distinct
    sentence once in length-sorted batches. Embeddings are kept in memory for the process
    and, with :data:`PERSIST_EMBEDDINGS`, on disk for every process (keyed by the backbone's
    and the adapter's fingerprints, the layer and the token ids), so a sentence is encoded
    once per backbone and layer across chapters.
    """

    def __init__(self, backbone: str, path: Path, tokenizer, model, device: str, adapter: Path | None,
                 fast_tokenizer=None, fingerprints: tuple[str, str] = ("-", "-")):
        self.backbone, self.path, self.tokenizer, self.model = backbone, path, tokenizer, model
        self.device, self.adapter = device, adapter
        self.fast_tokenizer = fast_tokenizer
        self.fingerprints = fingerprints
        self._cache: OrderedDict = OrderedDict()
        self._ids: dict[str, list[int]] = {}
        self._tokens: dict[int, str] = {}
        self._stores: dict = {}
        self.computed = 0  # sentences actually run through the model (for benchmarks and tests)
        self.loaded = 0  # sentence-layers read from the disk cache

    @property
    def num_layers(self) -> int:
        return int(self.model.config.num_hidden_layers)

    def encode(self, text: str) -> list[int]:
        return self.encode_many([text])[0]

    def encode_many(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, as ``bert_score.utils.sent_encode`` gives them.

        Printable-ASCII texts go through the fast tokenizer in one batch where
        :data:`FAST_TOKENIZERS` lists the slow one (same ids, about ten times faster; the
        tests compare both on every text of the datasets); the rest through bert-score.
        """
        from bert_score.utils import sent_encode

        todo = [t for t in dict.fromkeys(texts) if t not in self._ids]
        fast = [t for t in todo if self.fast_tokenizer is not None and _PLAIN_ASCII.fullmatch(t.strip() or "\0")]
        if fast:
            ids = self.fast_tokenizer([t.strip() for t in fast], add_special_tokens=True, truncation=True,
                                      max_length=self.tokenizer.model_max_length)["input_ids"]
            self._ids.update(zip(fast, ids))
        for t in todo:
            if t not in self._ids:
                self._ids[t] = list(sent_encode(self.tokenizer, t))
        return [self._ids[t] for t in texts]

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """The tokenizer's token strings of ``ids`` (each id converted once per process)."""
        table = self._tokens
        new = [i for i in dict.fromkeys(ids) if i not in table]
        if new:
            table.update(zip(new, self.tokenizer.convert_ids_to_tokens(new)))
        return [table[i] for i in ids]

    def check_layer(self, layer: int) -> int:
        if not isinstance(layer, int) or not 0 <= layer <= self.num_layers:
            raise ModelError(f"backbone {self.backbone!r} has layers 0..{self.num_layers}; layer={layer!r} is not one")
        return layer

    def _store(self):
        """The disk cache under the current cache folder (None when off or not writable)."""
        if not PERSIST_EMBEDDINGS:
            return None
        from .cache import EmbeddingCache

        folder = EmbeddingCache.folder()
        if folder not in self._stores:
            try:
                self._stores[folder] = EmbeddingCache.for_encoder(*self.fingerprints)
            except (OSError, sqlite3.OperationalError) as exc:
                self._no_store(folder, exc)
        return self._stores[folder]

    def _no_store(self, folder, exc) -> None:
        from .cache import CacheWarning

        warnings.warn(f"embedding cache in {folder} cannot be used ({exc}); embeddings stay in memory",
                      CacheWarning, stacklevel=3)
        self._stores[folder] = None

    def embed(self, id_lists: Sequence[Sequence[int]], layer: int, batch_size: int = 64) -> list:
        return self.embed_layers(id_lists, [layer], batch_size)[layer]

    def embed_layers(self, id_lists: Sequence[Sequence[int]], layers: Sequence[int], batch_size: int = 64
                     ) -> dict[int, list]:
        """``{layer: [tensor per id list]}``; one model pass per distinct sentence for all ``layers``."""
        import numpy as np
        import torch

        layers = [self.check_layer(layer) for layer in dict.fromkeys(layers)]
        seqs = [tuple(ids) for ids in id_lists]
        distinct = list(dict.fromkeys(seqs))
        store = self._store()
        if store is not None:
            for layer in layers:
                found = store.get([q for q in distinct if (q, layer) not in self._cache], layer)
                for q, arr in found.items():
                    self._cache[(q, layer)] = torch.from_numpy(arr.copy())
                self.loaded += len(found)
        todo = [q for q in distinct if any((q, layer) not in self._cache for layer in layers)]
        todo.sort(key=len, reverse=True)  # similar lengths share a batch: less padding
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        from .progress import tqdm

        bar = tqdm(total=len(todo), desc=f"encoding ({self.backbone}, layer {','.join(map(str, layers))})",
                   unit="sentence", delay=5)  # shown only when encoding takes longer than 5 s
        for start in range(0, len(todo), batch_size):
            batch = todo[start:start + batch_size]
            width = max(len(q) for q in batch)
            ids = np.full((len(batch), width), pad, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for i, seq in enumerate(batch):
                ids[i, :len(seq)] = seq
                mask[i, :len(seq)] = 1
            with torch.inference_mode():
                out = self.model(input_ids=torch.from_numpy(ids).to(self.device),
                                 attention_mask=torch.from_numpy(mask).to(self.device), output_hidden_states=True)
            for layer in layers:
                hidden = out.hidden_states[layer].float().cpu()
                fresh = {seq: hidden[i, :len(seq)].clone() for i, seq in enumerate(batch)}
                for seq, emb in fresh.items():
                    self._cache[(seq, layer)] = emb
                if store is not None:  # batch by batch: an interrupted run keeps what it computed
                    try:
                        store.put(layer, {seq: emb.numpy() for seq, emb in fresh.items()})
                    except sqlite3.OperationalError as exc:  # read-only folder, full disk
                        self._no_store(store.path.parent, exc)
                        store = None
            self.computed += len(batch)
            bar.update(len(batch))
        bar.close()
        result = {}
        for layer in layers:
            result[layer] = []
            for q in seqs:
                self._cache.move_to_end((q, layer))
                result[layer].append(self._cache[(q, layer)])
        while len(self._cache) > EMBEDDING_CACHE_SIZE:
            self._cache.popitem(last=False)
        return result

    def clear(self) -> None:
        """Forget the in-memory embeddings and ids (the disk cache stays)."""
        self._cache.clear()
        self._ids.clear()


@lru_cache(maxsize=8)
def _encoder(backbone: str, path: str, fingerprint: str, device: str, adapter: str | None,
             adapter_fp: str) -> Encoder:  # fingerprints in the key: changed files are loaded again
    from bert_score.utils import get_tokenizer
    from transformers import AutoModel

    backbones.offline_env()
    try:
        # bert-score's own tokenizer choice (slow tokenizer), so token ids match bert_score.score
        tokenizer = get_tokenizer(path, use_fast=False)
    except (OSError, ValueError) as exc:
        raise ModelError(f"backbone {backbone!r} at {path}: no usable tokenizer ({exc})") from exc
    fast = None
    if type(tokenizer).__name__ in FAST_TOKENIZERS:
        fast = get_tokenizer(path, use_fast=True)
        if (not getattr(fast, "is_fast", False) or fast.model_max_length != tokenizer.model_max_length
                or tokenizer.model_max_length > 1_000_000):  # no real limit recorded: leave it to bert-score
            fast = None
    model = _from_pretrained(AutoModel, Path(path), "an encoder", backbone)
    if adapter is not None:
        attach_adapter(model, adapter)
    model.eval().to(device)
    return Encoder(backbone, Path(path), tokenizer, model, device, Path(adapter) if adapter else None,
                   fast_tokenizer=fast, fingerprints=(fingerprint, adapter_fp))


def load_encoder(backbone: str, device: str = "auto", adapter=None) -> Encoder:
    """The encoder ``backbone`` (name or folder) on ``device``, with ``adapter`` attached; cached per process."""
    path = backbones.resolve(backbone)
    return _encoder(backbone, str(path), backbones.fingerprint(str(path)), resolve_device(device),
                    str(Path(adapter).resolve()) if adapter is not None else None, adapter_fingerprint(adapter))


@lru_cache(maxsize=4)
def _seq2seq(backbone: str, path: str, fingerprint: str, device: str):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = _from_pretrained(AutoTokenizer, Path(path), "a tokenizer", backbone)
    model = _from_pretrained(AutoModelForSeq2SeqLM, Path(path), "a sequence-to-sequence model", backbone)
    model.eval().to(device)
    return tokenizer, model


def load_seq2seq(backbone: str, device: str = "auto"):
    """``(tokenizer, model)`` of a sequence-to-sequence checkpoint; cached per process."""
    path = str(backbones.resolve(backbone))
    return _seq2seq(backbone, path, backbones.fingerprint(path), resolve_device(device))


@lru_cache(maxsize=4)
def _sequence_regression(backbone: str, path: str, fingerprint: str, device: str, adapter: str | None,
                         adapter_fp: str):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = _from_pretrained(AutoTokenizer, Path(path), "a tokenizer", backbone)
    model = _from_pretrained(AutoModelForSequenceClassification, Path(path), "a sequence-regression model", backbone)
    if model.config.num_labels != 1:
        raise ModelError(f"backbone {backbone!r} at {path} has {model.config.num_labels} output labels; "
                         "a regression metric needs a checkpoint with one (num_labels=1)")
    if adapter is not None:
        attach_adapter(model, adapter)
    model.eval().to(device)
    return tokenizer, model


def load_sequence_regression(backbone: str, device: str = "auto", adapter=None):
    """``(tokenizer, model)`` of a sequence-regression checkpoint (one output); cached per process."""
    path = str(backbones.resolve(backbone))
    return _sequence_regression(backbone, path, backbones.fingerprint(path), resolve_device(device),
                                str(Path(adapter).resolve()) if adapter is not None else None,
                                adapter_fingerprint(adapter))


def sequence_regression_scores(tokenizer, model, first: Sequence[str], second: Sequence[str], *,
                               batch_size: int = 32, max_length: int | None = None):
    """``model(first [SEP] second)`` for each pair: the one output logit, as a float64 array."""
    import numpy as np
    import torch

    max_length = max_length or min(int(getattr(tokenizer, "model_max_length", 512)), 512)
    device = next(model.parameters()).device
    order = sorted(range(len(first)), key=lambda i: len(first[i]) + len(second[i]))  # similar lengths: less padding
    out = np.zeros(len(first))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        enc = tokenizer([first[i] for i in idx], [second[i] for i in idx], padding=True, truncation=True,
                        max_length=max_length, return_tensors="pt")
        with torch.inference_mode():
            logits = model(**{k: v.to(device) for k, v in enc.items()}).logits
        out[idx] = logits[:, 0].double().cpu().numpy()
    return out


def clear() -> None:
    """Forget every loaded model (tests use it to load a changed folder again)."""
    _encoder.cache_clear()
    _seq2seq.cache_clear()
    _sequence_regression.cache_clear()
