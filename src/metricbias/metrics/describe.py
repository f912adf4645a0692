"""What a profile's metric configurations are, in the words a chapter states them.

* :func:`configuration_table`: one row per configuration with its signature;
* :func:`regression_note`: how the trained regression model of a profile was
  trained and how well it rates STS-B (one Markdown bullet, empty without one).

The BERTScore layer check is meta-evaluation: :func:`metricbias.metaeval.layers.layer_check`.
"""

from __future__ import annotations

import pandas as pd

from . import configurations, get


def configuration_table(specs) -> pd.DataFrame:
    """:func:`metricbias.metrics.configurations` of a profile's specs, with each configuration's ``signature``."""
    table = configurations(specs)
    table["signature"] = [get(name, **options).signature for _, name, options in specs]
    return table


def regression_note(specs) -> str:
    """A Markdown bullet on the first trained regression model among ``specs``: backbone, pooling, training
    steps and passes over STS-B, frozen layers, and its Pearson r on STS-B dev ("" when there is none)."""
    from . import regression

    names = [o["backbone"] for _, name, o in specs if name == "regression" and o.get("backbone") in regression.RECIPES]
    if not names:
        return ""
    reg = regression.trained_config(names[0])
    frozen = "the embedding layer" + (f" and the lowest {reg['frozen_layers']} transformer layers"
                                      if reg["frozen_layers"] else "")
    passes = reg["steps"] * reg["batch_size"] / reg["train_rows_used"]
    return (f"* **Regression.** `{names[0]}`: {reg['backbone']} + {reg['pooling']} pooling + a linear head, "
            f"fine-tuned for {reg['steps']} steps of {reg['batch_size']} pairs ({passes:.2f} passes over the "
            f"{reg['train_rows_used']} STS-B training pairs; seed {reg['seed']}; {frozen} frozen to keep CPU "
            f"training short): Pearson r = **{reg['dev_pearson']:.3f}** on {reg['dev_rows_used']} STS-B dev pairs.")


__all__ = ["configuration_table", "regression_note"]
