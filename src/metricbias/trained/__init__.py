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
    "mlm-all-MiniLM-L6-v2": ("mlm_head", {"base": "all-MiniLM-L6-v2"}),
    "mlm-all-mpnet-base-v2": ("mlm_head", {"base": "all-mpnet-base-v2"}),
    "para-all-MiniLM-L6-v2": ("paraphraser", {"base": "all-MiniLM-L6-v2", "adapter_layers": 3, "steps": 1500,
                                              "batch_size": 32}),
    "para-all-mpnet-base-v2": ("paraphraser", {"base": "all-mpnet-base-v2", "adapter_layers": 2, "steps": 700,
                                               "batch_size": 24}),
}


def recipe(name: str):
    """``(module, config)`` of a registered recipe, the config built from its options."""
    import importlib

    if name not in RECIPES:
        raise ValueError(f"no training recipe for {name!r}; recipes: {', '.join(RECIPES)}")
    module_name, options = RECIPES[name]
    module = importlib.import_module(f"{__name__}.{module_name}")
    return module, module.Config(**options)


__all__ = ["RECIPES", "recipe"]
