"""Chapter 3: the quality of the trained backbones found here, as the page shows it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


#: the quality measures every metric is reported with (``recipes.summary`` column -> page column)
TRAINED_QUALITY = {"flickr8k kendall": "Flickr8k Kendall", "wmt19-kk-en darr_tau": "WMT19 kk-en DARR tau",
                   "realsumm spearman": "REALSumm system Spearman", "stsb-dev pearson": "STS-B dev Pearson"}


def trained_quality(summary: pd.DataFrame, kind: str = "seq2seq") -> pd.DataFrame:
    """The quality of the trained backbones of ``kind`` found here as metrics, from a ``recipes.summary()`` frame:
    ``name, base, steps, device, validation perplexity`` and the four measures of :data:`TRAINED_QUALITY` (NaN where
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
