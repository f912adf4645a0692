"""The recipe of every trained part, keyed by the artifact's name as under ``models/``: which trainer, which options.

One table (:data:`RECIPES`) for the regression heads (``stsb-*``), paraphrasers (``para-*``), masked-LM
heads (``mlm-*``) and debiasing adapters (``debiased-*``); ``metricbias train NAME`` trains one
(``metricbias train --list`` lists them). The training data and the figures reached are in
:mod:`metricbias.book.training_data`; the trainers in :mod:`metricbias.metrics.regression`, :mod:`.paraphraser`,
:mod:`.mlm_head` and :mod:`metricbias.mitigation.training`. This module imports nothing of the project at
load time, so that every trainer can read its defaults here.
"""

from __future__ import annotations

#: every trained part, by its artifact's name (as under ``models/``): ``(trainer, options)``. The options are the
#: trainer's configuration fields that differ from its defaults; ``metricbias train NAME`` trains it.
#: Trainers (:data:`TRAINERS`): ``regression`` (:func:`metricbias.metrics.regression.train` on STS-B, options of
#: :class:`metricbias.metrics.regression_model.TrainConfig`), ``paraphraser`` and ``mlm_head``
#: (:mod:`metricbias.trained`, options of their ``Config``), ``adapter`` (CDA + distillation,
#: :func:`metricbias.mitigation.training.train`; steps follow from the data, :func:`~metricbias.mitigation.training.default_steps`).
RECIPES: dict[str, tuple[str, dict]] = {
    # BLEURT-style regression heads: a task adapter and a linear head on the frozen encoder, STS-B train, 4 epochs
    "stsb-all-MiniLM-L6-v2": ("regression", {"backbone": "all-MiniLM-L6-v2"}),
    # 12 layers of 768: a step costs ~7x MiniLM's on a CPU, so 2 epochs; bottleneck 48 keeps the file at ~3.6 MB
    "stsb-all-mpnet-base-v2": ("regression", {"backbone": "all-mpnet-base-v2", "epochs": 2,
                                              "adapter": "seq_bn[reduction_factor=16]"}),
    "stsb-all-MiniLM-L6-v2-smoke": ("regression", {"backbone": "all-MiniLM-L6-v2"}),
    # CPU recipes, sized for 2 shared cores: the vocabulary projection (30k x hidden per predicted token) dominates.
    # Masked-LM heads: the held-out-clean MRPC/STS-B sentences, the frozen encoder's states computed once (cached in
    # chunks, so a run resumes), then a few epochs. MiniLM: two maskings each and a seeded sample of WordNet's
    # examples and glosses (training only). MPNet (issue 42; its states cost ~8x MiniLM's, so under bf16 autocast,
    # ~3x faster on a CPU with bf16 instructions; validation states stay fp32): three maskings of every sentence and
    # one of every WordNet text, dropout on the states, the output bias started at the log unigram frequencies, and
    # the head of lowest validation loss kept (5,000 sentences alone overfit: train loss 0.26, validation 5.66).
    "mlm-all-MiniLM-L6-v2": ("mlm_head", {"base": "all-MiniLM-L6-v2", "maskings": 2, "max_extra": 16000,
                                          "epochs": 8, "batch_size": 256, "lr": 4e-3, "validation_fraction": 0.05}),
    "mlm-all-mpnet-base-v2": ("mlm_head", {"base": "all-mpnet-base-v2", "maskings": 3, "extra_maskings": 1,
                                           "max_extra": 160000, "epochs": 3,
                                           "batch_size": 256, "lr": 2e-3, "validation_fraction": 0.05,
                                           "dropout": 0.1, "bias_init": "log_frequency", "select": "loss",
                                           "patience": 3, "eval_every": 250, "checkpoint_every": 250,
                                           "autocast": "bfloat16"}),
    # paraphrasers: a [MASK] twin per target token predicts it (UniLM); MiniLM with
    # adapters in every layer (so attention can learn to copy), on the paraphrase pairs and word-deletion copies
    "para-all-MiniLM-L6-v2": ("paraphraser", {"base": "all-MiniLM-L6-v2", "adapter_layers": 6, "reduction_factor": 8,
                                              "denoise_examples": 6000,
                                              "steps": 600, "batch_size": 16}),
    # MPNet (issue 42): MiniLM's recipe, its bottleneck as wide (768 / 16 = 384 / 8 = 48); a step costs ~8x
    # MiniLM's, so under bf16 autocast (~3x faster on a CPU with bf16 instructions; validation and scoring in fp32),
    # checkpointed every 50 steps (a run longer than a session: `metricbias train NAME --run-dir ...`), validated
    # every 200 (a pass over the validation pairs in fp32 costs ~35 steps)
    "para-all-mpnet-base-v2": ("paraphraser", {"base": "all-mpnet-base-v2", "adapter_layers": 12,
                                               "reduction_factor": 16, "denoise_examples": 6000,
                                               "steps": 600, "batch_size": 16, "checkpoint_every": 50,
                                               "eval_every": 200, "autocast": "bfloat16"}),
    # debiasing adapters (Sun et al. 2022, 3.2): Table 7's batch size; the learning rate chosen on the CDA
    # validation split (chapter 6)
    "debiased-bertscore-all-MiniLM-L6-v2": ("adapter", {"metric": "bertscore", "backbone": "all-MiniLM-L6-v2",
                                                        "lr": 1e-3, "batch_size": 32}),
    "debiased-regression-stsb-all-MiniLM-L6-v2": ("adapter", {"metric": "regression",
                                                              "backbone": "stsb-all-MiniLM-L6-v2",
                                                              "lr": 1e-3, "batch_size": 16}),
    # Table 7's learning rate and batch size, for as many steps as one GPU session held beside the throughput
    # benchmarks (benchmarks/README.md): 1.5% of Table 7's 150k and 300k steps, about 2 minutes each on an H200
    "debiased-bertscore-all-MiniLM-L6-v2-table7": ("adapter", {"metric": "bertscore", "backbone": "all-MiniLM-L6-v2",
                                                               "lr": 1e-4, "batch_size": 32, "steps": 2250}),
    "debiased-regression-stsb-all-MiniLM-L6-v2-table7": ("adapter", {"metric": "regression",
                                                                     "backbone": "stsb-all-MiniLM-L6-v2",
                                                                     "lr": 5e-4, "batch_size": 16, "steps": 4500}),
}

#: trainer -> what it trains
TRAINERS = {"regression": "BLEURT-style regression head on STS-B", "paraphraser": "UniLM paraphraser",
            "mlm_head": "masked-LM head", "adapter": "debiasing adapter (CDA + distillation)"}


def trainer(name: str) -> tuple[str, dict]:
    """``(trainer, options)`` of the trained part ``name``; an unknown name is one line listing the names."""
    if name not in RECIPES:
        raise ValueError(f"no training recipe for {name!r}; names: {', '.join(RECIPES)}")
    kind, options = RECIPES[name]
    return kind, dict(options)


def recipe_names(*trainers: str) -> list[str]:
    """The recipes' names, in table order (of these trainers only, if given)."""
    return [n for n, (kind, _) in RECIPES.items() if not trainers or kind in trainers]


def recipe(name: str):
    """``(module, config)`` of a paraphraser or masked-LM head recipe, the config built from its options."""
    import importlib

    kind, options = trainer(name)
    if kind not in ("paraphraser", "mlm_head"):
        raise ValueError(f"{name!r} is trained by the {kind} trainer, not by metricbias.trained")
    module = importlib.import_module(f"metricbias.trained.{kind}")
    return module, module.Config(**options)


__all__ = ["RECIPES", "TRAINERS", "recipe", "recipe_names", "trainer"]
