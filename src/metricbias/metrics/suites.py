"""Every metric configuration a profile measures: ``suite(profile) -> [(label, name, options)]``.

``offline`` (and ``smoke``, its small twin) is everything that runs on this machine:
all n-gram and static-embedding metrics, BERTScore-F and MoverScore (1- and 2-grams)
on all-MiniLM-L6-v2, the regression metric trained on STS-B on top of all-MiniLM-L6-v2,
and generation metrics (BARTScore, PRISM, FrugalScore) only for backbones that are
available locally (none on a machine without the model hub). ``paper`` is the
configuration of Sun et al. (2022, Table 6) by hub id. Chapters 3-7 take their metric
lists from here, so a new metric is one line.
"""

from __future__ import annotations

from .. import backbones

Entry = tuple[str, str, dict]

NGRAM: list[Entry] = [
    ("BLEU", "bleu", {}), ("ROUGE-1", "rouge1", {}), ("ROUGE-2", "rouge2", {}), ("ROUGE-L", "rougeL", {}),
    ("ROUGE-SU4", "rougeSU4", {}), ("METEOR", "meteor", {}), ("NIST", "nist", {}), ("chrF", "chrf", {}),
    ("TER", "ter", {}), ("CIDEr-D", "cider", {}),
]
EMBEDDING: list[Entry] = [
    ("WMD", "wmd", {}), ("Embedding average", "embedding_average", {}), ("Vector extrema", "vector_extrema", {}),
    ("Greedy matching", "greedy_matching", {}),
]

#: short names of backbones in labels (as the released columns spell them)
SHORT = {
    "all-MiniLM-L6-v2": "MiniLM", "all-mpnet-base-v2": "MPNet", "distilbert-base-uncased": "DistilBERT",
    "bert-base-uncased": "BERT-base",
    "bert-large-uncased": "BERT-large", "roberta-base": "RoBERTa-base", "roberta-large": "RoBERTa-large",
    "bart-base": "BART-base", "bart-large": "BART-large", "bleurt-tiny": "BERT-tiny", "bleurt-base": "BERT-base",
    "bleurt-large": "BERT-large", "bleurt-20": "RemBERT", "frugalscore-tiny": "BERT-tiny",
    "frugalscore-small": "BERT-small", "frugalscore-medium": "BERT-medium", "prism": "PRISM",
}

#: the trained regression backbone each profile uses (shipped under models/, see metrics.regression)
REGRESSION_MODEL = {"offline": "stsb-all-MiniLM-L6-v2", "smoke": "stsb-all-MiniLM-L6-v2"}


def _matching(encoders: list[str], moverscore_encoders: list[str], bigrams: bool = False) -> list[Entry]:
    out: list[Entry] = [(f"BERTScore-{SHORT.get(b, b)}", "bertscore", {"backbone": b}) for b in encoders]
    for b in moverscore_encoders:
        out.append((f"MoverScore-{SHORT.get(b, b)}", "moverscore", {"backbone": b}))
        if bigrams:
            out.append((f"MoverScore-{SHORT.get(b, b)}-2gram", "moverscore", {"backbone": b, "n_gram": 2}))
    return out


def _generation(seq2seq: list[str], prism: list[str], frugal: list[str], variants=("F",)) -> list[Entry]:
    def tag(v):
        return "F" if v == "F" else v.lower()  # the released columns' spelling: -p, -r, -F

    out: list[Entry] = []
    for b in prism:
        out += [(f"PRISM-{tag(v)}", "prism", {"backbone": b, "variant": v}) for v in variants]
    for b in seq2seq:
        out += [(f"BARTScore-{SHORT.get(b, b)}-{tag(v)}", "bartscore", {"backbone": b, "variant": v})
                for v in variants]
    out += [(f"FrugalScore-{SHORT.get(b, b)}", "frugalscore", {"backbone": b}) for b in frugal]
    return out


def suite(profile: str = "offline") -> list[Entry]:
    """``(label, registry name, options)`` for every metric configuration of ``profile``."""
    if profile in ("offline", "smoke"):
        here = set(backbones.available())
        encoders = [b for b in backbones.for_profile(profile, "encoder") if b in here]
        seq2seq = [b for b, info in backbones.BACKBONES.items() if info.kind == "seq2seq" and b != "prism"
                   and b in here]
        prism = ["prism"] if "prism" in here else []
        frugal = [b for b, info in backbones.BACKBONES.items() if info.kind == "frugalscore" and b in here]
        out = NGRAM + EMBEDDING + _matching(encoders, encoders, bigrams=True)
        out += [(f"Regression-{SHORT['all-MiniLM-L6-v2']}", "regression", {"backbone": REGRESSION_MODEL[profile]})]
        return out + _generation(seq2seq, prism, frugal)
    if profile == "paper":
        encoders = backbones.for_profile("paper", "encoder")
        mover = ["distilbert-base-uncased", "bert-base-uncased", "bert-large-uncased"]
        out = NGRAM + EMBEDDING + _matching(encoders, mover)
        out += [(f"BLEURT-{SHORT[b]}", "regression", {"backbone": b})
                for b in backbones.for_profile("paper", "regression")]
        return out + _generation(backbones.for_profile("paper", "seq2seq"), backbones.for_profile("paper", "prism"),
                                 backbones.for_profile("paper", "frugalscore"), variants=("P", "R", "F"))
    raise ValueError(f"unknown profile {profile!r}; profiles: offline, smoke, paper")


def prepare(entries: list[Entry], *, device: str = "auto", progress: bool = True) -> list[Entry]:
    """The entries, unchanged: trained backbones (the regression metric's) ship under models/, nothing is trained."""
    return entries

