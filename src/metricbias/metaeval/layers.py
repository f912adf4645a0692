"""Which layer of an encoder BERTScore should read: bert-score's criterion, correlation with human ratings.

bert-score picks, per backbone it knows, the layer whose BERTScore-F correlates
best with human judgments (WMT16). For a backbone it does not know, we check the
same criterion on STS-B dev ratings.
"""

from __future__ import annotations

import pandas as pd


def layer_check(backbone: str, *, pairs: int = 0, seed: int = 0, device: str = "auto") -> pd.DataFrame:
    """Pearson r of BERTScore-F with the STS-B dev ratings at each layer of ``backbone`` (``pairs``: a random
    sample of that many dev pairs, 0 = all); columns ``layer, pearson, pairs``."""
    from ..datasets import stsb
    from ..metrics.matching import bertscore_layer_scan

    dev = stsb.load("dev")
    if pairs:
        dev = dev.sample(n=min(pairs, len(dev)), random_state=seed)
    scan = bertscore_layer_scan(backbone, dev["sentence2"].tolist(), dev["sentence1"].tolist(),
                                dev["score"].to_numpy(), device=device)
    return scan.assign(pairs=len(dev))


__all__ = ["layer_check"]
