"""Run profiles: what a profile runs, in one place.

``offline`` (the default of ``make book``) runs every configuration that works on a
machine without a model hub on the whole data, its slow configurations read from the
verified score packs of ``models/packs`` (``full`` is another name for it); ``smoke`` is a fast run on small samples used by the
test suite to check that every chapter executes and the book builds; ``paper``
names the paper's backbones by hub id for readers who have the hub.

A profile fixes three things:

* :data:`PROFILES` — the papermill parameters of every chapter. A chapter declares
  the parameters it understands in its cell tagged ``parameters``; the runner
  passes only those. ``common`` applies to every chapter; an entry named after a
  chapter (``"03_metrics_and_backbones"``) overrides it for that chapter;
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

#: ``make book``: every number on the whole data. The slow configurations' scores come from the verified score packs
#: of ``models/packs`` (``metricbias.packs``); what is still drawn says so on its page
_FULL = {
    "common": {"sample_size": 0, "seed": 0, "device": "auto", "n_resamples": 9999},
    # every released and built pair; each configuration's quality on all STS-B dev pairs and all DARR pairs
    "03_metrics_and_backbones": {"built_sample_size": 0, "stsb_pairs": 0, "darr_pairs": 0},
    # chapters 4, 5 and 7 leave out the generation metrics (a seq2seq pass per pair and direction) and, on the
    # larger text sets of 4 and 7, the MPNet configurations (5x MiniLM's size): chapter 3 measures every one.
    # Every counterfactual source; the PLL measures on every CrowS-Pairs and StereoSet pair (from the score packs)
    "04_bias_measures": {"n_seeds": 20, "rates": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "pll_sample_size": 0,
                         "skip_metrics": "bartscore,prism,all-mpnet-base-v2"},
    # sentence-level SEAT sets drawn down to 16 texts per set (word-level tests stay whole): the
    # full sets need 2.7M (x, y) pairs per metric, hours of CPU for the n-gram family alone
    "05_association_tests": {"sample_size": 16, "skip_metrics": "bartscore,prism"},
    # every Flickr8k image, REALSumm document and WMT19 kk-en DARR pair
    "07_gender_swap": {"skip_metrics": "bartscore,prism,all-mpnet-base-v2", "darr_pairs": 0},
    # the invariant wrapper of BERTScore on every bias pair and every item of each quality set (from the score packs)
    "06_debiasing_adapters": {"invariant_sample_size": 0, "invariant_quality_sample_size": 0},
    # chapter 8 reuses chapter 3's live scores and chapter 4's counterfactual scores (the score cache answers);
    # the simulation runs 2,000 datasets per size
    "08_trust": {"skip_metrics": "bartscore,prism,all-mpnet-base-v2", "sim_reps": 2000, "sim_resamples": 999,
                 "sim_test_resamples": 199, "comparison_resamples": 999},
    # the closing chapter's summary figure: chapter 3's live scores (the score cache answers)
    "09_metric_users": {},
    # the appendix reads chapter 7's DARR pairs back in the user formats (their cached scores)
    "A1_using_metricbias": {"darr_pairs": 0},
}

PROFILES: dict[str, dict[str, dict]] = {
    # `make book`: the whole data (benchmarks/README.md: a fresh build with the score packs)
    "offline": {"common": {"profile": "offline", **_FULL["common"]},
                **{chapter: dict(values) for chapter, values in _FULL.items() if chapter != "common"}},
    # the name earlier versions gave the whole-data run: the same parameters
    "full": {"common": {"profile": "full", **_FULL["common"]},
             **{chapter: dict(values) for chapter, values in _FULL.items() if chapter != "common"}},
    "smoke": {
        "common": {"profile": "smoke", "sample_size": 24, "seed": 0, "device": "cpu", "n_resamples": 199},
        # the six released attributes (the built sets of the other attributes left out: the code path is the same)
        "03_metrics_and_backbones": {"sample_size": 8, "built_sample_size": 8, "stsb_pairs": 40, "darr_pairs": 12,
                                     "attributes": "age,gender,physical_appearance,race,religion,socioeconomic"},
        # the generation metrics left to chapter 3, as in the whole-data profile; two multi-group sets
        "04_bias_measures": {"n_seeds": 2, "rates": [0.3, 0.8], "pll_sample_size": 12, "skip_metrics": "bartscore,prism",
                             "counterfactual_attributes": ["gender", "race"]},
        # chapter 5: four word-level tests, a few fast metrics
        "05_association_tests": {"tests": "C6-N,C6-T,DB:C,ABW-T", "levels": "word", "sample_size": 0,
                                 "metric_names": "bleu,meteor,chrf,embedding_average,wmd"},
        # the shipped adapters, evaluated on a few examples of the gender and race sets
        "06_debiasing_adapters": {"sample_size": 6, "cda_limit": 200, "quality_sample_size": 2, "invariant_sample_size": 4,
                                  "invariant_quality_sample_size": 3, "attributes": "race"},
        # chapter 7: 12 images / documents / DARR pairs and a few fast metrics of each family
        "07_gender_swap": {"sample_size": 12, "summary_sample_size": 12, "darr_pairs": 12,
                           "skip_on_summaries": "meteor,ter,bertscore",
                           "metric_names": "bleu,meteor,ter,rougeSU4,embedding_average,bertscore"},
        # chapter 8: chapter 3's and 4's smoke samples, a small simulation
        "08_trust": {"sample_size": 8, "counterfactual_sample_size": 24, "skip_metrics": "bartscore,prism", "n_draws": 20, "sizes": [20, 40, 80],
                     "comparison_resamples": 99, "sim_sizes": [20, 100], "sim_reps": 100, "sim_resamples": 99,
                     "sim_test_resamples": 99, "counterfactual_attributes": ["gender", "race"]},
        "09_metric_users": {"sample_size": 8},  # chapter 3's sample
        "A1_using_metricbias": {"darr_pairs": 12, "slice_documents": 3},
    },
    "paper": {
        "common": {"profile": "paper", "sample_size": 0, "seed": 0, "device": "auto", "n_resamples": 9999},
        "04_bias_measures": {"n_seeds": 50, "rates": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]},
        "07_gender_swap": {"darr_pairs": 0, "skip_on_summaries": ""},
    },
}


#: the text sets (``metricbias.packs``) each chapter scores with the slow configurations: what a score pack holds.
#: ``{name}`` is the chapter's parameter under the profile; the configurations are the chapter's own (the suite less
#: its ``skip_metrics``). A set a chapter scores that is missing here is computed live, and the chapter's pack
#: sentence (``reproduction.notes.pack_sentence``) shows it.
PACK_SETS: dict[str, list[str]] = {
    "03_metrics_and_backbones": ["pairs:published", "pairs:built",
                                 "quality:wmt19-kk-en;pairs={darr_pairs};seed={seed}",
                                 "quality:stsb-dev;pairs={stsb_pairs};seed={seed}"],
    "04_bias_measures": ["pairs:counterfactual", "pll:crows_pairs;pairs={pll_sample_size};seed={seed}",
                         "pll:stereoset;pairs={pll_sample_size};seed={seed}"],
    "05_association_tests": ["association:tests={tests};levels={levels};sample_size={sample_size};seed={seed}"],
    "07_gender_swap": ["metaeval:flickr8k", "metaeval:realsumm", "metaeval:wmt19-kk-en"],
}

#: chapter 6's attribute-blind wrappers (``metricbias.mitigation.invariant``) of the metrics its parameter
#: ``invariant_metrics`` names, on the sets it scores them: every bias pair and each quality set
PACK_INVARIANT_SETS: dict[str, list[str]] = {
    "06_debiasing_adapters": ["pairs:adapter-evaluation"] + [
        f"quality:{measure};pairs={{invariant_quality_sample_size}};seed={{seed}}"
        for measure in ("wmt19-kk-en", "realsumm", "flickr8k", "stsb-dev")],
}
#: the labels ``invariant_metrics`` takes: the metric each debiasing adapter was trained for and the chapter's
#: parameter naming its backbone
ADAPTED_METRICS = {"BERTScore": ("bertscore", "bertscore_backbone"), "regression": ("regression", "regression_backbone")}

#: with ``metricbias run --jobs N``, the chapters that start first when no earlier run of the profile recorded the
#: chapters' times (a fresh clone): the longest, so that none of them runs alone at the end. Chapter 3 comes after
#: chapters 4 and 5 since chapter 7 scores some of its pairs (the WMT19 kk-en DARR pairs) too.
START_FIRST = ("07_gender_swap", "04_bias_measures", "05_association_tests", "03_metrics_and_backbones")
#: the same with every score live (``make book RECOMPUTE=1``): chapter 3 is then two hours of the build (its
#: transformer configurations on every built pair and DARR pair), and the others run beside it in the other lane
START_FIRST_LIVE = ("03_metrics_and_backbones", "04_bias_measures", "07_gender_swap", "05_association_tests")

#: the text sets a chapter also scores with the fixed-backbone grid (``metrics.backbone_grid.entries()``)
PACK_GRID_SETS: dict[str, list[str]] = {"03_metrics_and_backbones": ["pairs:published"]}


def names() -> list[str]:
    return list(PROFILES)


def parameters(profile: str, chapter: str | None = None) -> dict:
    """The parameters of ``profile`` for ``chapter`` (the notebook's stem)."""
    check(profile)
    out = dict(PROFILES[profile]["common"])
    if chapter is not None:
        out.update(PROFILES[profile].get(chapter, {}))
    return out


#: the backbones each profile measures, by kind (see ``metricbias.backbones.KINDS``)
BACKBONES: dict[str, dict[str, list[str]]] = {
    # the offline encoders are those of the fixed-backbone grid (chapter 3), named once there
    "offline": {"encoder": list(backbone_grid.ENCODERS), "static": ["word2vec-googlenews-bolukbasi"],
                "regression": ["stsb-all-MiniLM-L6-v2"]},
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
BACKBONES["full"] = BACKBONES["offline"]  # the same configurations, on more pairs
#: local profiles measure only what resolves here; they also pick up generation backbones found locally
LOCAL = ("offline", "full", "smoke")

NGRAM = ["bleu", "rouge1", "rouge2", "rougeL", "rougeSU4", "meteor", "nist", "chrf", "ter", "cider"]
EMBEDDING = ["wmd", "embedding_average", "vector_extrema", "greedy_matching"]


def check(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
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
