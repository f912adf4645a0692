"""Run profiles: the papermill parameters every chapter is executed with.

``offline`` is the full run that works on a machine without a model hub (the
default of ``make book``); ``smoke`` is a fast run on small samples used by the
test suite to check that every chapter executes and the book builds; ``paper``
names the paper's backbones by hub id for readers who have the hub.

A chapter declares the parameters it understands in its cell tagged
``parameters``; the runner passes only those. ``common`` applies to every
chapter; an entry named after a chapter (``"03_metrics_and_backbones"``)
overrides it for that chapter.
"""

from __future__ import annotations

PROFILES: dict[str, dict[str, dict]] = {
    "offline": {
        "common": {"profile": "offline", "sample_size": 0, "seed": 0, "device": "auto", "n_resamples": 9999},
        "04_bias_measures": {"n_seeds": 20, "rates": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]},
        # sentence-level SEAT sets drawn down to 16 texts per set (word-level tests stay whole): the
        # full sets need 2.7M (x, y) pairs per metric, hours of CPU for the n-gram family alone
        "05_association_tests": {"sample_size": 16},
    },
    "smoke": {
        "common": {"profile": "smoke", "sample_size": 24, "seed": 0, "device": "cpu", "n_resamples": 199},
        "03_metrics_and_backbones": {"sample_size": 8, "stsb_pairs": 60},
        "04_bias_measures": {"n_seeds": 2, "rates": [0.3, 0.8]},
        # chapter 5: four word-level tests, a few fast metrics
        "05_association_tests": {"tests": "C6-N,C6-T,DB:C,ABW-T", "levels": "word", "sample_size": 0,
                                 "metric_names": "bleu,meteor,chrf,embedding_average,wmd"},
        # the shipped adapters, evaluated on a few examples
        "06_debiasing_adapters": {"cda_limit": 200, "quality_sample_size": 3},
        # chapter 7: 12 images / documents / DARR pairs and a few fast metrics of each family
        "07_gender_swap": {"sample_size": 12, "darr_pairs": 12, "skip_on_summaries": "meteor,ter,bertscore",
                           "metric_names": "bleu,meteor,ter,rougeSU4,embedding_average,bertscore"},
    },
    "paper": {
        "common": {"profile": "paper", "sample_size": 0, "seed": 0, "device": "auto", "n_resamples": 9999},
        "04_bias_measures": {"n_seeds": 50, "rates": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]},
        "07_gender_swap": {"darr_pairs": 0, "skip_on_summaries": ""},
    },
}


def names() -> list[str]:
    return list(PROFILES)


def parameters(profile: str, chapter: str | None = None) -> dict:
    """The parameters of ``profile`` for ``chapter`` (the notebook's stem)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    out = dict(PROFILES[profile]["common"])
    if chapter is not None:
        out.update(PROFILES[profile].get(chapter, {}))
    return out
