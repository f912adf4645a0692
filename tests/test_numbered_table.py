"""The book's numbered tables (``book/numbered.py``) and the page forms of chapters 2 and 3."""

import numpy as np
import pandas as pd

from metricbias.book import numbered
from metricbias.book.reproduction import ch2_datasets, ch3_paradigms, ch3_quality, generation_rows


def test_markdown_table_headers_formats_and_alignment():
    frame = pd.DataFrame({"metric": ["BLEU", "a|b"], "ci_low": [0.123456, np.nan], "share": [0.5, 0.25],
                          "n_pairs": [1200, 3]})
    text = numbered.markdown_table(frame, decimals=3, formats={"share": "{:.0%}"})
    lines = text.splitlines()
    assert lines[0] == "| metric | 95% CI low | share | pairs |"  # headers in words (display.label)
    assert lines[1] == "|---|---:|---:|---:|"
    assert lines[2] == "| BLEU | 0.123 | 50% | 1,200 |"
    assert lines[3] == "| a\\|b | — | 25% | 3 |"  # a pipe escaped, an undefined cell as "—"


def test_glue_table_returns_nothing_so_its_cell_prints_nothing(monkeypatch):
    glued = {}
    monkeypatch.setattr("myst_nb.glue", lambda key, value, display=True: glued.update({key: value}))
    assert numbered.glue_table("t", pd.DataFrame({"metric": ["BLEU"], "share": [0.5]})) is None
    assert glued["t"].data.startswith("| metric | share |")


def test_in_words_names_attributes_and_sources():
    frame = pd.DataFrame({"attribute": ["physical_appearance", "gender"], "source": ["crows_pairs", "winobias"],
                          "pairs": [1, 2]})
    out = ch2_datasets.in_words(frame)
    assert out["attribute"].tolist() == ["physical appearance", "gender"]
    assert out["source"].tolist() == ["CrowS-Pairs", "WinoBias"]
    assert frame["attribute"].iloc[0] == "physical_appearance"  # the input is left as it was
    labels = ch2_datasets.in_words(pd.DataFrame({"example": ["crows_pairs, drop, physical_appearance", ""]}))
    assert labels["example"].tolist() == ["CrowS-Pairs, drop, physical appearance", ""]


def test_identical_cells_are_counted_once():
    rows = []
    for metric, scores in [("ROUGE-1", [(0.5, 0.4), (0.9, 0.8)]), ("ROUGE-L", [(0.5, 0.4), (0.9, 0.8)]),
                           ("BLEU", [(0.3, 0.1), (0.2, 0.2)])]:
        for i, (s1, s2) in enumerate(scores):
            rows.append({"attribute": "gender", "pair_id": i, "metric": metric, "score_1": s1, "score_2": s2})
    # on race ROUGE-L differs from ROUGE-1: only the gender cell is one function
    rows += [{"attribute": "race", "pair_id": 0, "metric": m, "score_1": s, "score_2": 0.0}
             for m, s in [("ROUGE-1", 0.5), ("ROUGE-L", 0.6), ("BLEU", 0.1)]]
    scores = pd.DataFrame(rows)
    once, same = ch3_paradigms.counted_once(scores)
    assert same[["attribute", "metric", "same_as_metric"]].values.tolist() == [["gender", "ROUGE-L", "ROUGE-1"]]
    assert len(once) == len(scores) - 2 and not ((once["attribute"] == "gender") & (once["metric"] == "ROUGE-L")).any()


def test_left_out_generation_rows_are_named():
    configs = pd.DataFrame({"metric": ["BLEU", "BARTScore-F", "PRISM-F"], "paradigm": ["n-gram", "Generation",
                                                                                    "Generation"]})
    assert generation_rows.left_out(configs, True) == []
    assert generation_rows.left_out(configs, False) == ["BARTScore-F", "PRISM-F"]


def test_correlation_findings_give_the_verdict_of_the_interval():
    correlations = pd.DataFrame([
        {"measure": ch3_quality.QUALITY_MEASURES["darr_tau"], "configurations": 23, "Spearman ρ": 0.8,
         "CI low": 0.54, "CI high": 0.92},
        {"measure": ch3_quality.QUALITY_MEASURES["stsb_r"], "configurations": 23, "Spearman ρ": 0.1,
         "CI low": -0.3, "CI high": 0.5}])
    found = ch3_quality.correlation_findings(correlations)
    assert found["darr_verdict"] == "rises with quality" and found["darr_rho"] == 0.8
    assert found["stsb_verdict"] == "is not distinguishable from no relation" and found["stsb_configurations"] == 23
    both = ch3_quality.correlation_findings(correlations.assign(**{"CI low": 0.1}))
    assert both["verdicts"] == "rises with quality on both measures"
    assert found["verdicts"] == ("rises with quality on the DARR τ and is not distinguishable from no relation on "
                                 "the STS-B r")


def test_live_cells_that_recompute_a_released_column_are_one_function():
    from metricbias.datasets import published

    released = published.scores()
    ids = released.loc[released["attribute"] == "race", "pair_id"].unique()[:5]
    bleu = released[(released["metric"] == "BLEU") & released["pair_id"].isin(ids)]
    chrf = released[(released["metric"] == "chrF") & released["pair_id"].isin(ids)]
    live = pd.concat([bleu, chrf.assign(score_1=chrf["score_1"] + 0.01)], ignore_index=True)  # chrF planted off
    found = ch3_paradigms.released_recomputed(live, ids)
    assert found == {"cells": 2, "recomputed": 1, "metrics": "BLEU", "released": "BLEU and chrF"}
