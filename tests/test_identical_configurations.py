"""One configuration per distinct function: identical score vectors collapse, near-identical ones do not, and the
fixed-backbone decomposition never sees two identical configurations."""

import numpy as np
import pandas as pd
import pytest

from metricbias.bias import decomposition
from metricbias.bias.scores import drop_identical, identical_configurations
from metricbias.book.reproduction import ch3_paradigm_claim


def _table(columns: dict) -> pd.DataFrame:
    """A score table: two attributes x 4 pairs; ``columns`` maps a metric to its 16 scores (8 pairs x 2 sides)."""
    rows = []
    for metric, values in columns.items():
        for k in range(8):
            rows.append({"attribute": "gender" if k < 4 else "race", "pair_id": k % 4, "metric": metric,
                         "score_1": values[2 * k], "score_2": values[2 * k + 1]})
    return pd.DataFrame(rows)


def test_identical_configurations_collapse_and_near_identical_stay():
    base = np.linspace(0.1, 0.9, 16)
    rounded = base.copy()
    rounded[3] += 4e-9  # float32 rounding of a batch: the same function
    near = base.copy()
    near[5] += 1e-4  # one score apart beyond rounding, on one side of one pair: a different function
    scores = _table({"PRISM-F": base, "BARTScore-F": rounded, "Near": near, "Other": base[::-1]})
    merged = identical_configurations(scores)
    assert merged[["metric", "same_as", "pairs"]].to_dict("records") == [
        {"metric": "BARTScore-F", "same_as": "PRISM-F", "pairs": 8}]
    assert merged["largest_difference"].iloc[0] == pytest.approx(4e-9)
    kept, dropped = drop_identical(scores)
    assert list(dict.fromkeys(kept["metric"])) == ["PRISM-F", "Near", "Other"]
    assert dropped.equals(merged) and len(kept) == 3 * 8
    # exactly: the rounded copy stays apart
    assert identical_configurations(scores, rtol=0, atol=0).empty


def test_identity_needs_the_same_pairs_and_both_sides():
    base = np.arange(16, dtype=float)
    swapped = base.reshape(8, 2)[:, ::-1].ravel()  # the same numbers, sides exchanged
    assert identical_configurations(_table({"A": base, "B": swapped})).empty
    shifted = _table({"A": base, "B": base})
    shifted.loc[shifted["metric"] == "B", "pair_id"] += 10  # same scores on other pairs
    assert identical_configurations(shifted).empty
    # row order does not matter: the pairs are matched by their keys
    shuffled = _table({"A": base, "B": base})
    shuffled = pd.concat([shuffled[shuffled["metric"] == "A"], shuffled[shuffled["metric"] == "B"].iloc[::-1]])
    assert identical_configurations(shuffled)["metric"].tolist() == ["B"]


def test_identical_table_names_the_merge_in_words():
    merged = pd.DataFrame({"metric": ["PRISM-MiniLM-F"], "same_as": ["BARTScore-MiniLM-F"], "pairs": [40],
                           "largest_difference": [3.9e-8], "extra": [1]})
    out = ch3_paradigm_claim.identical_table(merged)
    assert list(out.columns) == ["configuration", "merged into", "pairs", "largest difference"]
    assert out.values.tolist() == [["PRISM-MiniLM-F", "BARTScore-MiniLM-F", 40, 3.9e-8]]
    assert ch3_paradigm_claim.identical_table(merged.iloc[:0]).empty


def _availability():
    from metricbias.metrics import backbone_grid

    configs = backbone_grid.configs()
    return configs.assign(runs=True, fix="")


@pytest.mark.usefixtures("private_cache")
def test_decomposition_input_has_no_duplicate(monkeypatch):
    """PRISM-F and BARTScore-F score every pair alike on each backbone: the decomposition gets one of them."""
    availability = _availability()
    rng = np.random.default_rng(0)
    rows = []
    per_cell = {}
    for r in availability.itertuples():
        # one score draw per (paradigm, backbone), MoverScore apart from BERTScore: every generation row alike
        key = (r.paradigm, r.backbone, r.family == "MoverScore")
        per_cell.setdefault(key, rng.random((6, 2)))
        for attribute in ("gender", "race"):
            for i, (s1, s2) in enumerate(per_cell[key]):
                rows.append({"attribute": attribute, "pair_id": i, "metric": r.metric, "score_1": s1, "score_2": s2})
    scores = pd.DataFrame(rows)
    seen = {}
    real = decomposition.decompose

    def spy(scores_, configs_, **kwargs):
        seen["scores"], seen["configs"] = scores_, configs_
        return real(scores_, configs_, **kwargs)

    monkeypatch.setattr(decomposition, "decompose", spy)
    out = ch3_paradigm_claim.grid_decomposition(scores, availability, n_resamples=9)
    assert identical_configurations(seen["scores"]).empty
    assert not seen["configs"]["metric"].str.startswith("PRISM").any()
    assert set(seen["configs"]["metric"]) == set(seen["scores"]["metric"])
    assert len(seen["configs"]) == 8  # BERTScore-F, MoverScore, Regression, BARTScore-F on each of two backbones
    # the shares are those of the table without PRISM (identical configurations average to the same cell)
    monkeypatch.setattr(decomposition, "decompose", real)
    alone = availability[~availability["family"].eq("PRISM")]
    expected = ch3_paradigm_claim.grid_decomposition(scores[~scores["metric"].str.startswith("PRISM")], alone, n_resamples=9)
    pd.testing.assert_frame_equal(out, expected)
    marked = ch3_paradigm_claim.without_identical(availability, identical_configurations(scores[scores["metric"].isin(
        availability.loc[availability["decomposed"], "metric"])]))
    assert marked.loc[marked["family"] == "PRISM", "same_as"].str.startswith("BARTScore-F").all()
    assert not marked.loc[marked["family"] == "PRISM", "decomposed"].any()
