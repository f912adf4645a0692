"""The chapters under each profile: their papermill parameters, the text sets each scores (what a score pack
holds) and which start first when chapters run side by side.

A profile (:mod:`metricbias.profiles`: ``offline``, ``full``, ``smoke``, ``paper``) names the metric configurations
it measures; here it also fixes each chapter's parameters:

* :data:`PROFILES` — the papermill parameters of every chapter. A chapter declares
  the parameters it understands in its cell tagged ``parameters``; the runner
  passes only those. ``common`` applies to every chapter; an entry named after a
  chapter (``"03_metrics_and_backbones"``) overrides it for that chapter;
* :data:`PACK_SETS`, :data:`PACK_GRID_SETS`, :data:`PACK_INVARIANT_SETS` — the text sets each chapter scores with
  its slow configurations (:mod:`metricbias.book.pack_plan`);
* :data:`START_FIRST`, :data:`START_FIRST_LIVE` — the chapters ``metricbias run --jobs N`` starts first.
"""

from __future__ import annotations

from .. import profiles

#: ``make book``: every number on the whole data. The slow configurations' scores come from the verified score packs
#: of ``models/packs`` (``metricbias.book.packs``); what is still drawn says so on its page
_FULL = {
    "common": {"sample_size": 0, "seed": 0, "device": "auto", "n_resamples": 9999},
    # every released and built pair; each configuration's quality on all STS-B dev pairs and all DARR pairs
    "03_metrics_and_backbones": {"built_sample_size": 0, "stsb_pairs": 0, "darr_pairs": 0},
    # chapters 4, 5 and 7 leave out the generation metrics (a seq2seq pass per pair and direction) and, on the
    # larger text sets of 4 and 7, the MPNet configurations (5x MiniLM's size): chapter 3 measures every one.
    # Every counterfactual source; the PLL measures on every CrowS-Pairs and StereoSet pair (from the score packs)
    "04_bias_measures": {"n_seeds": 20, "rates": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "pll_sample_size": 0,
                         "skip_metrics": "bartscore,prism,all-mpnet-base-v2"},
    # whole SEAT sets: r(t, A, B) of every target from the association packs (2.7M (x, y) pairs per configuration
    # otherwise), every configuration of the chapter
    "05_association_tests": {"sample_size": 0, "drawn_sample_size": 0, "skip_metrics": "bartscore,prism"},
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
                             "counterfactual_attributes": ["gender", "race"], "n_pair_resamples": 10},
        # chapter 5: four word-level tests, a few fast metrics
        "05_association_tests": {"tests": "C6-N,C6-T,DB:C,ABW-T", "levels": "word", "sample_size": 0,
                                 "metric_names": "bleu,meteor,chrf,embedding_average,wmd"},
        # the shipped adapters, evaluated on a few examples of the gender and race sets
        "06_debiasing_adapters": {"sample_size": 6, "cda_limit": 200, "quality_sample_size": 2, "invariant_sample_size": 4,
                                  "invariant_quality_sample_size": 3, "attributes": "race",
                                  "darr_pairs": 12, "stsb_pairs": 40},  # the paired quality test: chapter 3's samples
        # chapter 7: 12 images / documents / DARR pairs and a few fast metrics of each family
        "07_gender_swap": {"sample_size": 12, "summary_sample_size": 12, "darr_pairs": 12, "image_resamples": 99,
                           "skip_on_summaries": "meteor,ter,bertscore",
                           "metric_names": "bleu,meteor,ter,rougeSU4,embedding_average,bertscore"},
        # chapter 8: chapter 3's and 4's smoke samples, a small simulation
        "08_trust": {"sample_size": 8, "counterfactual_sample_size": 24, "skip_metrics": "bartscore,prism", "n_draws": 20, "sizes": [20, 40, 80],
                     "comparison_resamples": 99, "sim_sizes": [20, 100], "sim_reps": 100, "sim_resamples": 99,
                     "sim_test_resamples": 99, "counterfactual_attributes": ["gender", "race"]},
        "09_metric_users": {"sample_size": 8, "darr_pairs": 12, "stsb_pairs": 40},  # chapter 3's samples
        "A1_using_metricbias": {"darr_pairs": 12, "slice_documents": 3},
    },
    "paper": {
        "common": {"profile": "paper", "sample_size": 0, "seed": 0, "device": "auto", "n_resamples": 9999},
        "04_bias_measures": {"n_seeds": 50, "rates": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]},
        "07_gender_swap": {"darr_pairs": 0, "skip_on_summaries": ""},
    },
}


#: the text sets (``metricbias.book.packs``) each chapter scores with the slow configurations: what a score pack holds.
#: ``{name}`` is the chapter's parameter under the profile; the configurations are the chapter's own (the suite less
#: its ``skip_metrics``). A set a chapter scores that is missing here is computed live, and the chapter's pack
#: sentence (``reproduction.notes.pack_sentence``) shows it.
PACK_SETS: dict[str, list[str]] = {
    "03_metrics_and_backbones": ["pairs:published", "pairs:built",
                                 "quality:wmt19-kk-en;pairs={darr_pairs};seed={seed}",
                                 "quality:stsb-dev;pairs={stsb_pairs};seed={seed}"],
    "04_bias_measures": ["pairs:counterfactual", "pll:crows_pairs;pairs={pll_sample_size};seed={seed}",
                         "pll:stereoset;pairs={pll_sample_size};seed={seed}"],
    # r per target of the whole tests, every configuration
    "05_association_tests": ["associations:tests={tests};levels={levels}"],
    "07_gender_swap": ["metaeval:flickr8k", "metaeval:realsumm", "metaeval:wmt19-kk-en"],
}

#: chapter 6's attribute-blind wrappers (``metricbias.mitigation.invariant``) of the metrics its parameter
#: ``invariant_metrics`` names, on the sets it scores them: every bias pair and each quality set
PACK_INVARIANT_SETS: dict[str, list[str]] = {
    "06_debiasing_adapters": ["pairs:adapter-evaluation"] + [
        f"quality:{measure};pairs={{invariant_quality_sample_size}};seed={{seed}}"
        for measure in ("wmt19-kk-en", "realsumm", "flickr8k", "stsb-dev")],
}
#: chapter 3's quality table sets each debiasing adapter against BLEU on the same items (paired): the adapted
#: metrics on the chapter's quality sets (``reproduction.ch3_trained.part_specs``)
PACK_ADAPTER_SETS: dict[str, list[str]] = {
    "03_metrics_and_backbones": ["quality:wmt19-kk-en;pairs={darr_pairs};seed={seed}",
                                 "quality:stsb-dev;pairs={stsb_pairs};seed={seed}"],
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


def parameters(profile: str, chapter: str | None = None) -> dict:
    """The parameters of ``profile`` for ``chapter`` (the notebook's stem)."""
    profiles.check(profile)
    out = dict(PROFILES[profile]["common"])
    if chapter is not None:
        out.update(PROFILES[profile].get(chapter, {}))
    return out


__all__ = ["ADAPTED_METRICS", "PACK_GRID_SETS", "PACK_INVARIANT_SETS", "PACK_SETS", "PROFILES", "START_FIRST",
           "START_FIRST_LIVE", "parameters"]
