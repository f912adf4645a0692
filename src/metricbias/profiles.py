"""Run profiles: the metric configurations each profile measures, in one place.

``offline`` runs every configuration that works on a machine without a model hub (``full`` is another name for
it); ``smoke`` is a fast profile of a few configurations; ``paper`` names the paper's backbones by hub id for
readers who have the hub. ``metricbias sweep --profile`` and the report use them; what the book's chapters do
under each profile (their parameters) is :mod:`metricbias.book.chapter_profiles`.

A profile fixes two things:

* :data:`BACKBONES` — the backbones of each kind the profile measures;
* :func:`suite` — every metric configuration it measures, built from those backbones:
  all n-gram and static-embedding metrics, BERTScore-F and MoverScore (1- and
  2-grams) on each encoder, the regression metric on each regression backbone, and
  the generation metrics on each sequence-to-sequence backbone (``offline`` and
  ``smoke``: only the backbones available on this machine, which includes the
  UniLM paraphrasers ``para-<encoder>`` shipped under ``models/``, for BARTScore and
  PRISM-style scoring alike). A new metric or backbone is one line here.
"""

from __future__ import annotations

from .metrics import backbone_grid
from .metrics.registry import Spec

#: the offline encoders are those of the fixed-backbone grid, named once there
_OFFLINE = {"encoder": list(backbone_grid.ENCODERS), "static": ["word2vec-googlenews-bolukbasi"],
            "regression": ["stsb-all-MiniLM-L6-v2"]}
#: the backbones each profile measures, by kind (see ``metricbias.backbones.KINDS``)
BACKBONES: dict[str, dict[str, list[str]]] = {
    "offline": _OFFLINE,
    "full": _OFFLINE,  # the same configurations, on more pairs
    "smoke": {"encoder": ["all-MiniLM-L6-v2"], "static": ["word2vec-googlenews-bolukbasi"],
              "regression": ["stsb-all-MiniLM-L6-v2"]},
    "paper": {
        "encoder": ["distilbert-base-uncased", "bert-base-uncased", "bert-large-uncased", "roberta-base",
                    "roberta-large"],
        "moverscore": ["distilbert-base-uncased", "bert-base-uncased", "bert-large-uncased"],
        "seq2seq": ["bart-base", "bart-large"],
        "regression": ["bleurt-tiny", "bleurt-base", "bleurt-large", "bleurt-20"],
        "frugalscore": ["frugalscore-tiny", "frugalscore-small", "frugalscore-medium"],
        "prism": ["prism"],
        "static": ["word2vec-googlenews-bolukbasi"],
    },
}
#: local profiles measure only what resolves here; they also pick up generation backbones found locally
LOCAL = ("offline", "full", "smoke")

NGRAM = ["bleu", "rouge1", "rouge2", "rougeL", "rougeSU4", "meteor", "nist", "chrf", "ter", "cider"]
EMBEDDING = ["wmd", "embedding_average", "vector_extrema", "greedy_matching"]


def names() -> list[str]:
    return list(BACKBONES)


def check(profile: str) -> str:
    if profile not in BACKBONES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(BACKBONES)}")
    return profile


def backbones_for(profile: str, kind: str) -> list[str]:
    """The backbones of ``kind`` that ``profile`` measures.

    Local profiles keep those available here, and add any registered generation
    backbone found locally (a populated Hugging Face cache). ``prism`` is the PRISM
    paraphraser, listed apart from the other sequence-to-sequence models.
    """
    from . import backbones

    listed = list(BACKBONES[check(profile)].get(kind, []))
    if profile not in LOCAL:
        return listed
    here = backbones.available()
    if kind in ("seq2seq", "frugalscore", "prism"):
        registry_kind = "seq2seq" if kind == "prism" else kind
        listed += [b for b in here if backbones.BACKBONES[b].kind == registry_kind and (b == "prism") == (kind == "prism")
                   and b not in listed]
        if kind == "prism":  # PRISM-style scoring on the paraphrasers trained here (para-<encoder>)
            listed += [b for b in here if backbones.BACKBONES[b].kind == "seq2seq" and backbones.BACKBONES[b].trained]
    # a trained regression backbone ships under models/ (or is named by the user): kept for a clear error
    return [b for b in listed if b in here or kind == "regression"]


def names_of(text) -> set[str]:
    """Names (registry names, backbones) from a comma-separated string or any iterable of names."""
    items = text.split(",") if isinstance(text, str) else (text or [])
    return {n.strip() for n in items if n and n.strip()}


def _skipped(spec: Spec, left_out: set[str]) -> bool:
    return spec.name in left_out or spec.options.get("backbone") in left_out


def suite(profile: str = "offline", skip="") -> list[Spec]:
    """Every metric configuration of ``profile``, as :class:`~metricbias.metrics.Spec` ``(label, name, options)``,
    less those whose registry name or backbone is in ``skip`` (comma-separated)."""
    left_out = names_of(skip)
    return [s for s in _suite(profile) if not _skipped(s, left_out)]


def _suite(profile: str) -> list[Spec]:
    def b(kind):
        return backbones_for(profile, kind)

    variants = ("P", "R", "F") if profile == "paper" else ("F",)
    out = [Spec.of(n) for n in NGRAM + EMBEDDING]
    out += [Spec.of("bertscore", backbone=e) for e in b("encoder")]
    for e in (b("moverscore") if "moverscore" in BACKBONES[profile] else b("encoder")):
        out.append(Spec.of("moverscore", backbone=e))
        if profile != "paper":  # bigrams: our own addition, not a released column
            out.append(Spec.of("moverscore", backbone=e, n_gram=2))
    out += [Spec.of("regression", backbone=r) for r in b("regression")]
    out += [Spec.of("bartscore", backbone=s, variant=v) for s in b("seq2seq") for v in variants]
    # PRISM after BARTScore: on a model without a target-language tag the two are one function, and the book keeps
    # the first of identical configurations (metricbias.bias.scores.drop_identical)
    out += [Spec.of("prism", backbone=p, variant=v) for p in b("prism") for v in variants]
    out += [Spec.of("frugalscore", backbone=f) for f in b("frugalscore")]
    return out
