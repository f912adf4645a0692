"""Small trained parts on top of a frozen pretrained backbone, so that every paradigm runs live on it.

* :mod:`.paraphraser` — the encoder used as a sequence-to-sequence model (UniLM's
  attention mask) with bottleneck adapters and an LM head tied to the word embeddings:
  the generation paradigm (``bartscore``, ``prism``) on ``para-<backbone>``;
* :mod:`.mlm_head` — a masked-LM head (dense + LayerNorm + tied decoder) on the frozen
  encoder: the pseudo-log-likelihood measures on ``mlm-<backbone>``;
* :mod:`.parts` — how the parts are saved (fp16 safetensors + ``provenance.json``) and loaded.

What the project trains, on which data, and the figures reached: :mod:`metricbias.recipes`
(``metricbias train NAME``).
"""
