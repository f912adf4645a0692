"""What a profile's metric configurations are, in the words a chapter states them.

* :func:`configuration_table`: one row per configuration with its signature;
* :func:`regression_note`: how the trained regression model of a profile was
  trained and how well it rates STS-B (one Markdown bullet, empty without one).

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


def regression_note(specs) -> str:
    """A Markdown bullet on the first trained regression model among ``specs``: what is trained on the frozen
    backbone, training steps and passes over STS-B, and its Pearson r on STS-B dev ("" when there is none)."""
    from ...metrics import get, regression

    for _, name, options in specs:
        folder = get(name, **options).backbone_path if name == "regression" else None
        if folder is None or not regression.is_trained_folder(folder):
            continue
        reg = regression.provenance(str(folder))
        where = "shipped in `models/`" if Path(folder).parent.name == "models" else "trained in the cache"
        return (f"* **Regression.** `{options['backbone']}` ({where}): the frozen {reg['base']} + a task adapter "
                f"(`{reg['config']['adapter']}`) + {reg['config']['pooling']} pooling + a linear head, "
                f"{reg['trainable_parameters']:,} trained parameters, {reg['steps']} steps of {reg['batch_size']} "
                f"pairs ({reg['epochs']:.2f} passes over the {reg['train_rows']} STS-B training pairs; seed "
                f"{reg['seed']}; `{reg['command']}` on {reg['device']}): Pearson r = "
                f"**{reg['figures']['stsb_dev_pearson']:.3f}** on {reg['dev_rows']} STS-B dev pairs.")
    return ""


__all__ = ["configuration_table", "regression_note"]
