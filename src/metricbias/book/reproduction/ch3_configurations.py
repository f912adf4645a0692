"""What a profile's metric configurations are, in the words a chapter states them.

* :func:`configuration_table`: one row per configuration with its signature;
* :func:`regression_model`: how the trained regression model of a profile was
  trained and how well it rates STS-B (one row, empty without one).

The BERTScore layer check is meta-evaluation: :func:`metricbias.metaeval.layers.layer_check`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...metrics import configurations, get


def configuration_table(specs) -> pd.DataFrame:
    """:func:`metricbias.metrics.configurations` of a profile's specs, with each configuration's ``signature``."""
    table = configurations(specs)
    table["signature"] = [get(name, **options).signature for _, name, options in specs]
    return table


def regression_model(specs) -> pd.DataFrame:
    """The first trained regression model among ``specs`` as one row: the backbone folder, where it lies, the frozen
    base, adapter and pooling, trained parameters, steps, batch, passes over the STS-B training pairs, seed, the
    training command and device, and its Pearson r on the STS-B dev pairs (an empty table when there is none)."""
    from ...metrics import regression

    for _, name, options in specs:
        folder = get(name, **options).backbone_path if name == "regression" else None
        if folder is None or not regression.is_trained_folder(folder):
            continue
        reg = regression.provenance(str(folder))
        return pd.DataFrame([{
            "model": options["backbone"], "where": "models/" if Path(folder).parent.name == "models" else "cache",
            "frozen base": reg["base"], "adapter": reg["config"]["adapter"], "pooling": reg["config"]["pooling"],
            "trained parameters": reg["trainable_parameters"], "steps": reg["steps"], "batch": reg["batch_size"],
            "passes over STS-B train": reg["epochs"], "STS-B train pairs": reg["train_rows"], "seed": reg["seed"],
            "command": reg["command"], "device": reg["device"],
            "Pearson r (STS-B dev)": reg["figures"]["stsb_dev_pearson"], "STS-B dev pairs": reg["dev_rows"]}])
    return pd.DataFrame()


__all__ = ["configuration_table", "regression_model"]
