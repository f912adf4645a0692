"""Small trained parts on top of a frozen pretrained backbone, so that every paradigm runs live on it.

* :mod:`.paraphraser` — the encoder used as a sequence-to-sequence model (UniLM's
  attention mask) with bottleneck adapters and an LM head tied to the word embeddings:
  the generation paradigm (``bartscore``, ``prism``) on ``para-<backbone>``;
* :mod:`.mlm_head` — a masked-LM head (dense + LayerNorm + tied decoder) on the frozen
  encoder: the pseudo-log-likelihood measures on ``mlm-<backbone>``;
* :mod:`.data` — their training text, with every evaluation text held out;
* :mod:`.parts` — how the parts are saved (fp16 safetensors + ``provenance.json``) and loaded.

:data:`RECIPES` lists what the project trains; ``metricbias train NAME`` (re)trains one
into ``<cache>/trained/NAME`` (``--out models/NAME`` to ship it).
"""

from __future__ import annotations

#: trained backbone name -> (module under metricbias.trained, recipe options)
RECIPES: dict[str, tuple[str, dict]] = {
    # CPU recipes, sized for 2 shared cores: the vocabulary projection (30k x hidden per predicted token) dominates.
    # Masked-LM heads: a seeded sample of the held-out-clean sentences, one masking each, a few epochs.
    "mlm-all-MiniLM-L6-v2": ("mlm_head", {"base": "all-MiniLM-L6-v2", "max_sentences": 3000, "epochs": 3}),
    "mlm-all-mpnet-base-v2": ("mlm_head", {"base": "all-mpnet-base-v2", "max_sentences": 3000, "epochs": 3}),
    # paraphrasers: adapters in the top layers (the frozen layers below computed once per example), one epoch
    "para-all-MiniLM-L6-v2": ("paraphraser", {"base": "all-MiniLM-L6-v2", "adapter_layers": 3, "steps": 300,
                                              "batch_size": 16}),
    "para-all-mpnet-base-v2": ("paraphraser", {"base": "all-mpnet-base-v2", "adapter_layers": 2, "steps": 300,
                                               "batch_size": 16, "max_examples": 1600}),
}


def recipe(name: str):
    """``(module, config)`` of a registered recipe, the config built from its options."""
    import importlib

    if name not in RECIPES:
        raise ValueError(f"no training recipe for {name!r}; recipes: {', '.join(RECIPES)}")
    module_name, options = RECIPES[name]
    module = importlib.import_module(f"{__name__}.{module_name}")
    return module, module.Config(**options)


def summary(names=tuple(RECIPES)) -> "pd.DataFrame":
    """One row per trained backbone found here: what it is, how it was trained and the figures it reached.

    Figures: the paraphrasers' validation log-likelihood (and perplexity) and, once measured
    (``metricbias train NAME --quality``), their quality as a metric; the heads' masked-token
    accuracy on held-out sentences (before training, with the untrained head, too).
    """
    import pandas as pd

    from .. import backbones

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
        for q in info.get("quality", {}).get("rows", []):
            row[f"{q['dataset']} {q['statistic']}"] = q["value"]
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["RECIPES", "recipe", "summary"]
