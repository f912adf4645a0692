"""The training data of the paraphrasers and masked-LM heads, their training, and how well they came out.

The trained parts themselves (a UniLM paraphraser, a masked-LM head; saving, loading,
training loops) are in :mod:`metricbias.trained`, and the recipe of every trained part in
:mod:`metricbias.trained.recipes`; this module trains the paraphrasers and heads (:func:`train`:
``metricbias train NAME``) on their **training data** and reports the **figures** they reached
(:func:`summary`, :func:`measure_quality`).

**Held out** (compared after :func:`metricbias.mitigation.cda.normalize_text`): every text of
the evaluation sets as :func:`metricbias.mitigation.evaluation.held_out_texts` gathers them
(the bias pairs, released and built; WMT19 kk-en, REALSumm, the judged Flickr8k captions,
STS-B dev), plus the SEAT sets, CrowS-Pairs, every StereoSet sentence and context, and MRPC
dev. A training pair is dropped when either side is held out; the counts say how many.

* **paraphrase pairs**: MRPC train pairs labelled paraphrases, STS-B train pairs rated at
  least 4, and pairs of Flickr8k captions of the same image (images that the experts judged
  are evaluation data, and the registered Flickr8k source holds only those, so none
  remains); each pair in both directions; and, if the recipe asks (``denoise_examples``),
  masked-LM sentences rebuilt from a copy with words deleted (:func:`denoising_pairs`);
* **masked-LM sentences**: every sentence of MRPC train and STS-B train (the held-out
  validation sentences are drawn from these), plus, for training only, WordNet 3.0's usage
  examples and glosses (Debian's WordNet, :mod:`metricbias.wordnet`; Fellbaum, 1998).

**Quality** of a paraphraser as a metric, measured the way the book measures every metric's:
BARTScore-F on it, through :func:`metricbias.metaeval.quality.quality`: the WMT19 kk-en DARR
tau over every pair and the STS-B dev Pearson over all 1,500 pairs (:data:`QUALITY_SIZES`),
with BLEU's on the same items beside it, recorded in the parts' ``provenance.json``
(``metricbias train NAME --quality``). Recording figures there does not change the metric's
signature (:func:`metricbias.trained.parts.scores_fingerprint`).
"""

from __future__ import annotations

import json
import time
from functools import lru_cache

import numpy as np
import pandas as pd

from .. import backbones, sources
from ..trained.recipes import recipe, recipe_names

def train(name: str, out=None, *, config=None, device: str = "auto", progress: bool = True, command: str = "",
          **chunks) -> dict | None:
    """Train recipe ``name`` (``config`` overrides its configuration) on the project's data into ``out``.

    ``out`` defaults to ``<cache>/trained/NAME`` (``models/NAME`` ships it with the project). A masked-LM head
    and a paraphraser take ``chunks``: ``run_dir``, ``resume``, ``stop_after``
    (:func:`metricbias.trained.mlm_head.train`, :func:`metricbias.trained.paraphraser.train`).
    Returns the provenance written with the parts (None when stopped by ``stop_after``).
    """
    module, default = recipe(name)
    config = config or default
    out = out or backbones.trained_dirs(name)[1]
    if module.KIND == "mlm":
        sentences, counts = mlm_sentences()
        # WordNet is read only for a recipe that trains on it
        extra, extra_counts = (wordnet_sentences(held_out_texts(), seen=set(sentences)) if config.max_extra
                               else ([], counts.iloc[0:0]))
        return module.train(config, out, name=name, sentences=sentences, extra_sentences=extra,
                            counts=pd.concat([counts, extra_counts], ignore_index=True), device=device,
                            progress=progress, command=command, sources=MLM_SOURCES, **chunks)
    examples, counts = paraphrase_pairs()
    if getattr(config, "denoise_examples", 0):
        noisy, noisy_counts = denoising_pairs(mlm_sentences()[0], config.denoise_examples, seed=config.seed,
                                              seen=set(examples["text"]))
        examples = pd.concat([examples, noisy], ignore_index=True)
        counts = pd.concat([counts, noisy_counts], ignore_index=True)
    return module.train(config, out, name=name, examples=examples, counts=counts, device=device, progress=progress,
                        command=command, **chunks)


# --- training data ---------------------------------------------------------------------------------

PAIR_SOURCES = ("mrpc", "stsb", "flickr8k")
#: what the masked-LM heads read (recorded in their provenance): the sentences, and the training-only extra text
MLM_SOURCES = {"sentences": "MRPC train and STS-B train sentences (the validation sentences are drawn from these)",
               "extra": "WordNet 3.0 usage examples and glosses (Debian's wordnet-base; Fellbaum, 1998)",
               "held_out": "every text of the book's evaluation sets (held_out_texts), compared normalized"}
#: STS-B ratings at or above this are paraphrase-like (5 = equivalent, 4 = mostly equivalent)
STSB_MIN_RATING = 4.0
FLICKR_REFS = "flickr8k_expert/refs.json"
STEREOSET_FILE = "stereoset/dev.json"


def _stereoset_texts() -> set[str]:
    data = json.loads(sources.path(STEREOSET_FILE).read_text(encoding="utf-8"))["data"]
    out = set()
    for task in ("intersentence", "intrasentence"):
        for item in data.get(task, []):
            out.add(item["context"])
            out.update(s["sentence"] for s in item["sentences"])
    return out


def _seat_texts() -> set[str]:
    from ..datasets import seat

    out = set()
    for name, level in seat.select("all"):
        test = seat.load(name, level)
        out.update(test.targets + test.attributes)
    return out


@lru_cache(maxsize=1)
def held_out_texts() -> frozenset[str]:
    """Every evaluation text, normalized (see the module docstring for the sets)."""
    from ..datasets import crows_pairs
    from ..mitigation import cda, evaluation

    texts = set(evaluation.held_out_texts()) | _seat_texts() | _stereoset_texts()
    texts.update(t for row in crows_pairs.read() for t in (row["sent_more"], row["sent_less"]))
    mrpc_dev = cda.read_mrpc("dev")
    texts.update(mrpc_dev["sentence_1"])
    texts.update(mrpc_dev["sentence_2"])
    normalized = {cda.normalize_text(t) for t in texts}
    normalized.discard("")
    return frozenset(normalized)


def flickr8k_caption_pairs() -> pd.DataFrame:
    """Consecutive captions of each Flickr8k image in the registered source: ``image_id, sentence_1, sentence_2``."""
    refs = json.loads(sources.path(FLICKR_REFS).read_text(encoding="utf-8"))
    by_image: dict[str, list[str]] = {}
    for r in refs:
        caption = r["caption"].strip()
        if caption and caption not in by_image.setdefault(r["image_id"], []):
            by_image[r["image_id"]].append(caption)
    rows = [(img, a, b) for img, caps in by_image.items() for a, b in zip(caps, caps[1:])]
    return pd.DataFrame(rows, columns=["image_id", "sentence_1", "sentence_2"])


def _raw_pairs(source: str) -> pd.DataFrame:
    from ..datasets import stsb
    from ..mitigation import cda

    if source == "mrpc":
        t = cda.read_mrpc("train")
        return t[t["label"] == 1][["sentence_1", "sentence_2"]]
    if source == "stsb":
        t = stsb.load("train")
        t = t[t["score"] >= STSB_MIN_RATING]
        return pd.DataFrame({"sentence_1": t["sentence1"], "sentence_2": t["sentence2"]})
    if source == "flickr8k":
        return flickr8k_caption_pairs()[["sentence_1", "sentence_2"]]
    raise ValueError(f"unknown paraphrase source {source!r}; sources: {', '.join(PAIR_SOURCES)}")


def _drop_held_out(frame: pd.DataFrame, columns, held_out) -> tuple[pd.DataFrame, int]:
    from ..mitigation.cda import normalize_text

    keep = np.array([not any(normalize_text(row[c]) in held_out for c in columns) for _, row in frame.iterrows()],
                    dtype=bool)
    return frame[keep], int((~keep).sum())


def paraphrase_pairs(sources_=PAIR_SOURCES, held_out=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(examples, counts)``: ``source, pair, text, target`` (each kept pair in both directions) and per-source counts."""
    held_out = held_out_texts() if held_out is None else held_out
    rows, counts = [], []
    for src in sources_:
        raw = _raw_pairs(src).reset_index(drop=True)
        kept, dropped = _drop_held_out(raw, ["sentence_1", "sentence_2"], held_out)
        kept = kept[kept["sentence_1"].str.strip() != kept["sentence_2"].str.strip()]
        for i, (a, b) in enumerate(zip(kept["sentence_1"], kept["sentence_2"])):
            rows += [(src, f"{src}-{i:05d}", a.strip(), b.strip()), (src, f"{src}-{i:05d}", b.strip(), a.strip())]
        counts.append({"source": src, "pairs_read": len(raw), "dropped_held_out": dropped, "pairs_used": len(kept)})
    examples = pd.DataFrame(rows, columns=["source", "pair", "text", "target"]).drop_duplicates(["text", "target"])
    return examples.reset_index(drop=True), pd.DataFrame(counts)


#: a denoising pair drops this fraction of the words of its source sentence (at least one)
DENOISE_DROP = 0.15


def denoising_pairs(sentences: list[str], n: int, *, seed: int = 0, seen=()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(examples, counts)``: ``n`` seeded ``sentences`` (the masked-LM sentences: none held out) as targets, each
    with a copy missing a seeded :data:`DENOISE_DROP` of its words as the source (BART's denoising, in word-deletion
    form): the copying a paraphraser needs. A source already in ``seen`` is skipped."""
    rng = np.random.default_rng(seed)
    chosen = [sentences[i] for i in sorted(rng.choice(len(sentences), min(n, len(sentences)), replace=False))]
    rows = []
    for i, target in enumerate(chosen):
        words = target.split()
        drop = set(rng.choice(len(words), max(1, int(round(DENOISE_DROP * len(words)))), replace=False).tolist())
        source = " ".join(w for j, w in enumerate(words) if j not in drop) if len(words) > 1 else target
        if source not in seen:
            rows.append(("denoise", f"denoise-{i:05d}", source, target))
    examples = pd.DataFrame(rows, columns=["source", "pair", "text", "target"])
    counts = pd.DataFrame([{"source": "denoise", "pairs_read": len(chosen), "dropped_held_out": 0,
                            "pairs_used": len(examples)}])
    return examples, counts


def mlm_sentences(held_out=None) -> tuple[list[str], pd.DataFrame]:
    """``(sentences, counts)``: the distinct sentences of MRPC train and STS-B train that are not held out."""
    from ..datasets import stsb
    from ..mitigation import cda

    held_out = held_out_texts() if held_out is None else held_out
    mrpc, sts = cda.read_mrpc("train"), stsb.load("train")
    found = {"mrpc": list(mrpc["sentence_1"]) + list(mrpc["sentence_2"]),
             "stsb": list(sts["sentence1"]) + list(sts["sentence2"])}
    out, counts, seen = [], [], set()
    for src, texts in found.items():
        distinct = list(dict.fromkeys(t.strip() for t in texts if t.strip()))
        kept = [t for t in distinct if cda.normalize_text(t) not in held_out and t not in seen]
        seen.update(kept)
        out += kept
        counts.append({"source": src, "sentences_read": len(distinct),
                       "dropped_held_out": sum(cda.normalize_text(t) in held_out for t in distinct),
                       "sentences_used": len(kept)})
    return out, pd.DataFrame(counts)


def wordnet_sentences(held_out, seen=()) -> tuple[list[str], pd.DataFrame]:
    """``(texts, counts)``: WordNet's distinct usage examples and glosses not held out (nor in ``seen``), sorted."""
    from .. import wordnet
    from ..mitigation import cda

    reader = wordnet.reader()
    found = {"wordnet-examples": set(), "wordnet-glosses": set()}
    for synset in reader.all_synsets():
        found["wordnet-examples"].update(t.strip() for t in synset.examples() if t.strip())
        found["wordnet-glosses"].add(synset.definition().strip())
    out, counts, seen = [], [], set(seen)
    for src, texts in found.items():
        distinct = sorted(t for t in texts if t)
        dropped = sum(cda.normalize_text(t) in held_out for t in distinct)
        kept = [t for t in distinct if cda.normalize_text(t) not in held_out and t not in seen]
        seen.update(kept)
        out += kept
        counts.append({"source": src, "sentences_read": len(distinct), "dropped_held_out": dropped,
                       "sentences_used": len(kept)})
    return out, pd.DataFrame(counts)


# --- figures ---------------------------------------------------------------------------------------

#: the quality sets of a paraphraser, each whole (0: every item): WMT19 kk-en DARR pairs, STS-B dev pairs
QUALITY_SIZES = {"wmt19-kk-en": 0, "stsb-dev": 0}
#: what a paraphraser's BARTScore-F is set beside: the field's baseline, on the same sets
QUALITY_REFERENCE = "bleu"


def measure_quality(backbone: str, *, sizes: dict | None = None, seed: int = 0, variant: str = "F",
                    device: str = "auto", cache=None, reference: str | None = QUALITY_REFERENCE) -> pd.DataFrame:
    """``metric, dataset, statistic, value, n, sample_size, signature`` of BARTScore-``variant`` on ``backbone``
    and, on the same items, of the ``reference`` metric (BLEU)."""
    from .. import metrics
    from ..metaeval.quality import load_quality_sets, quality

    sizes = QUALITY_SIZES if sizes is None else sizes
    scored = {f"bartscore {variant}": metrics.get("bartscore", backbone=backbone, variant=variant, device=device)}
    if reference:
        scored[reference] = metrics.get(reference)
    frames = []
    for name, size in sizes.items():
        sets = load_quality_sets((name,), sample_size=size, seed=seed)
        for label, metric in scored.items():
            frames.append(quality(metric, sets, cache=cache).assign(metric=label, sample_size=size,
                                                                      signature=metric.signature))
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", *[c for c in out.columns if c != "metric"]]]


def record_quality(backbone: str, table: pd.DataFrame, *, seed: int = 0, seconds: float | None = None) -> None:
    """Add ``table`` under ``quality`` in the provenance of trained backbone ``backbone`` (written atomically)."""
    from ..paths import atomic_path

    folder = backbones.resolve(backbone)
    path = folder / backbones.PROVENANCE_FILE
    info = json.loads(path.read_text(encoding="utf-8"))
    info["quality"] = {"metric": "bartscore F", "reference": QUALITY_REFERENCE, "seed": seed, "seconds": seconds,
                       "rows": table.drop(columns="signature").to_dict("records")}
    with atomic_path(path, suffix=".json") as tmp:
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def measure_and_record_head(name: str, *, device: str = "auto") -> dict:
    """A masked-LM head's validation figures measured again from its saved tensors, with the reference point of
    masked-token accuracy (the most frequent token, :func:`metricbias.trained.mlm_head.reference_point`), written
    into its provenance's ``figures`` (``metricbias train NAME --quality``). The accuracy must equal the recorded
    one: the head is evaluated as it was saved."""
    from .. import models
    from ..paths import atomic_path
    from ..trained import mlm_head

    folder = backbones.trained_path(name) or backbones.resolve(name)
    path = folder / backbones.PROVENANCE_FILE
    info = json.loads(path.read_text(encoding="utf-8"))
    sentences, _ = mlm_sentences()
    measured = mlm_head.measure(str(folder), sentences, device=models.resolve_device(device))
    recorded = info["figures"].get("masked_token_accuracy")
    if recorded is not None and abs(measured["masked_token_accuracy"] - recorded) > 1e-9:
        raise ValueError(f"{name}: masked-token accuracy measured again {measured['masked_token_accuracy']:.6f}, "
                         f"recorded {recorded:.6f}: the head or its validation data changed")
    keep = ("most_frequent_token", "most_frequent_token_accuracy")
    info["figures"].update({k: measured[k] for k in keep})
    info.setdefault("recorded", {})["reference_point"] = f"metricbias train {name} --quality"
    with atomic_path(path, suffix=".json") as tmp:
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return {k: measured[k] for k in ("masked_token_accuracy", "validation_loss", "validation_positions", *keep)}


def measure_and_record_quality(backbone: str, *, sizes: dict | None = None, seed: int = 0, device: str = "auto"):
    start = time.perf_counter()
    table = measure_quality(backbone, sizes=sizes, seed=seed, device=device)
    record_quality(backbone, table, seed=seed, seconds=round(time.perf_counter() - start, 1))
    return table


def summary(names=tuple(recipe_names("mlm_head", "paraphraser"))) -> pd.DataFrame:
    """One row per trained backbone found here: what it is, how it was trained and the figures it reached.

    Figures: the paraphrasers' validation log-likelihood (and perplexity) and, once measured
    (``metricbias train NAME --quality``), their quality as a metric; the heads' masked-token
    accuracy on held-out sentences (before training, with the untrained head, too).
    """
    rows = []
    for name in names:
        folder = backbones.trained_path(name)
        if folder is None:
            rows.append({"name": name, "available": False})
            continue
        info = backbones.trained_info(folder)
        row = {"name": name, "available": True, "kind": info["kind"], "base": info["base"], "steps": info["steps"],
               "device": info["device"], "trainable_parameters": info["trainable_parameters"],
               "seconds": info["seconds"]["total"], **{k: v for k, v in info["data"].items() if k != "counts"},
               **{k: v for k, v in info["figures"].items() if k != "log"}}
        for q in info.get("quality", {}).get("rows", []):  # the paraphraser's own; the reference's prefixed
            metric = q.get("metric", "bartscore F")
            row[("" if metric == "bartscore F" else f"{metric} ") + f"{q['dataset']} {q['statistic']}"] = q["value"]
        rows.append(row)
    return pd.DataFrame(rows)



__all__ = ["PAIR_SOURCES", "QUALITY_REFERENCE", "QUALITY_SIZES", "STSB_MIN_RATING", "flickr8k_caption_pairs", "held_out_texts",
           "denoising_pairs", "measure_and_record_head", "measure_and_record_quality", "measure_quality", "mlm_sentences", "paraphrase_pairs", "record_quality",
           "summary", "train", "wordnet_sentences"]
