"""Small trained parts on top of a frozen pretrained backbone, so that every paradigm runs live on it.

* :mod:`.paraphraser` — the encoder used as a sequence-to-sequence model (UniLM's
  attention mask) with bottleneck adapters and an LM head tied to the word embeddings:
  the generation paradigm (``bartscore``, ``prism``) on ``para-<backbone>``;
* :mod:`.mlm_head` — a masked-LM head (dense + LayerNorm + tied decoder) on the frozen
  encoder: the pseudo-log-likelihood measures on ``mlm-<backbone>``;
* :mod:`.parts` — how the parts are saved (fp16 safetensors + ``provenance.json``) and loaded;
* :mod:`.recipes` — the recipe of every trained part of the project, these and the regression
  heads and debiasing adapters (``metricbias train NAME``);
* :mod:`.loop` — the optimisation loop that every trainer runs;
* :mod:`.checkpoint` — checkpoints of a run longer than a session (heads and paraphrasers), and bf16 autocast.

On which data the paraphrasers and heads are trained, and the figures reached: :mod:`metricbias.book.training_data`.
"""
