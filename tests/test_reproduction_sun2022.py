"""Our n-gram metrics against the per-example columns Sun et al. released (all 943 pairs, 1,886 rows)."""

import numpy as np
import pytest

from metricbias.book.reproduction.sun2022 import AGREEMENT_COLUMNS, agreement, live_scores


@pytest.fixture(scope="module")
def table():
    return agreement(columns=["BLEU", "ROUGE", "NIST", "chrF"])


@pytest.mark.parametrize("column", ["BLEU", "ROUGE", "NIST", "chrF"])
def test_defaults_reproduce_the_released_columns(table, column):
    rows = table[table["column"] == column].set_index("attribute")
    assert list(table.columns) == AGREEMENT_COLUMNS
    assert rows.loc["all", "n_rows"] == 1886
    assert (rows["pearson_r"] > 1 - 1e-12).all()  # every attribute and overall
    assert (rows["max_abs_diff"] < 1e-8).all()  # the released values are printed to 9 decimals
    np.testing.assert_allclose(rows["bias_ours"], rows["bias_released"], atol=1e-6)


def test_released_bias_values(table):
    bias = table.set_index(["column", "attribute"])["bias_released"]
    # Eq. 2 from the released columns, as chapter 1 computes it (gender, to 2 decimals as Table 6 prints)
    assert round(bias[("BLEU", "gender")], 2) == 0.10 and round(bias[("chrF", "gender")], 2) == 1.23


def test_other_settings_agree_less():
    nist5 = agreement(columns=["NIST"], attributes=["religion", "socioeconomic"], settings={"NIST": ("nist", {"n": 5})})
    r = nist5.set_index("attribute")["pearson_r"]
    assert 0.99 < r["all"] < 1 - 1e-6  # NIST-5 (nltk's default) is close but not the released column


def test_meteor_is_not_reproducible():
    # the released METEOR scored Python sets of tokens (hash-seed-dependent order); ours scores the sequence
    scores = live_scores(columns=["METEOR"], attributes=["age"])
    assert set(scores.columns) >= {"ours_1", "ours_2", "released_1", "released_2", "signature"}
    ours = np.concatenate([scores["ours_1"], scores["ours_2"]])
    released = np.concatenate([scores["released_1"], scores["released_2"]])
    assert np.corrcoef(ours, released)[0, 1] < 0.99
    assert scores["signature"].iloc[0].startswith("metric:meteor|")


def test_unknown_column_is_a_clear_error():
    with pytest.raises(ValueError, match="no metric settings for released column.*BERTScore"):
        agreement(columns=["BERTScore-RoBERTa-large"])
