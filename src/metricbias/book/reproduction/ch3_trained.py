"""Chapter 3: the quality of the trained backbones found here, as the page shows it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


#: the quality measures a paraphraser is reported with (``training_data.summary`` column -> page column): its
#: BARTScore-F and BLEU's on the same items (every WMT19 kk-en DARR pair, all STS-B dev pairs)
TRAINED_QUALITY = {"wmt19-kk-en darr_tau": "DARR tau", "bleu wmt19-kk-en darr_tau": "BLEU DARR tau",
                   "stsb-dev pearson": "STS-B dev r", "bleu stsb-dev pearson": "BLEU STS-B dev r"}


def trained_quality(summary: pd.DataFrame, kind: str = "seq2seq") -> pd.DataFrame:
    """The quality of the trained backbones of ``kind`` found here as metrics, from a ``training_data.summary()`` frame:
    ``name, base, steps, device, validation perplexity`` and the measures of :data:`TRAINED_QUALITY` (NaN where
    not measured yet)."""
    found = summary[summary["available"].astype(bool)]
    if "kind" in found:
        found = found[found["kind"] == kind]
    out = pd.DataFrame({"name": found["name"], "base": found.get("base"), "steps": found.get("steps"),
                        "device": found.get("device"),
                        "validation perplexity": found.get("validation_perplexity", np.nan)})
    for col, label in TRAINED_QUALITY.items():
        out[label] = found[col] if col in found else np.nan
    return out.reset_index(drop=True)
