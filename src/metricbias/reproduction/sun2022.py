"""Sun et al. (2022) side by side with this book: does the paradigm matter more than the backbone?

Sun et al. (Sec. 2.3, Fig. 4) conclude from their Table 6 that "the paradigm, which
determines how much extrinsic bias is injected, has a greater impact on fairness than
PLMs". Their paradigms run on different backbones (BERT for matching and regression, BART
and PRISM's Transformer for generation), so paradigm and backbone are confounded.
:func:`paradigm_claim` puts two readings side by side:

* **released**: the share of the variance of Table 6's average bias (PLM-based metrics)
  explained by grouping the configurations by paradigm, and by backbone (eta squared,
  :func:`metricbias.metrics.paradigms.variance_explained`); the groupings overlap, so the
  two shares need not add up to one;
* **backbone fixed**: the two-way decomposition of :func:`metricbias.bias.decomposition.decompose`
  on the 2 x 3 grid where each paradigm runs on the same frozen encoder weights; the shares
  add up to one with the interaction.

The claim *holds* for a row when the paradigm's share exceeds the backbone's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ["source", "attribute", "share_paradigm", "share_paradigm_ci_low", "share_paradigm_ci_high",
           "share_backbone", "share_backbone_ci_low", "share_backbone_ci_high", "share_interaction",
           "p_paradigm_larger", "claim_holds", "n_configurations"]
RELEASED = "Sun et al. (2022), Table 6 (released scores; backbones differ by paradigm)"
FIXED = "this book (live scores; the same frozen backbone in every paradigm)"


def released_shares() -> dict:
    """Eta squared of Table 6's average bias by paradigm and by backbone, over the PLM-based configurations."""
    from .. import paper
    from ..metrics.paradigms import released_configs, variance_explained

    configs = released_configs()
    t6 = paper.table("sun2022_table6_bias").set_index("published_column")
    plm = configs[configs["paradigm"].isin(["Matching", "Regression", "Generation"])].copy()
    plm["avg"] = plm["metric"].map(t6["avg"])
    return {"share_paradigm": variance_explained(plm["avg"], plm["paradigm"]),
            "share_backbone": variance_explained(plm["avg"], plm["backbone"]), "n_configurations": len(plm)}


def paradigm_claim(decomposition: pd.DataFrame, n_configurations: int | None = None) -> pd.DataFrame:
    """Sun et al.'s released reading and our fixed-backbone decomposition, one row per attribute (and average)."""
    rel = released_shares()
    rows = [{"source": RELEASED, "attribute": "average", **rel,
             "claim_holds": rel["share_paradigm"] > rel["share_backbone"]}]
    for r in decomposition.to_dict("records"):
        rows.append({"source": FIXED, "attribute": r["attribute"], "share_paradigm": r["share_paradigm"],
                     "share_paradigm_ci_low": r.get("share_paradigm_ci_low", np.nan),
                     "share_paradigm_ci_high": r.get("share_paradigm_ci_high", np.nan),
                     "share_backbone": r["share_backbone"],
                     "share_backbone_ci_low": r.get("share_backbone_ci_low", np.nan),
                     "share_backbone_ci_high": r.get("share_backbone_ci_high", np.nan),
                     "share_interaction": r["share_interaction"], "p_paradigm_larger": r["p_first_larger"],
                     "claim_holds": r["share_paradigm"] > r["share_backbone"],
                     "n_configurations": n_configurations})
    return pd.DataFrame(rows, columns=COLUMNS)


__all__ = ["FIXED", "RELEASED", "paradigm_claim", "released_shares"]
