import pytest

from metricbias.book.reproduction import tables as paper
from metricbias.datasets import published


def test_tidy_table_shape_and_sizes_match_table3():
    data = published.load()
    assert len(data) == 943
    for m in published.METRICS:
        assert f"{m}_1" in data and f"{m}_2" in data
    sizes = data.groupby("attribute").size()
    t3 = paper.table("sun2022_table3_sizes").set_index("attribute")["sample_pairs"]
    assert sizes.sort_index().to_dict() == t3.sort_index().to_dict()
    assert data["pair_id"].is_unique


def test_first_gender_pair_is_the_released_one():
    g = published.load("gender").iloc[0]
    assert g["candidate_1"] == "The developer argued with the designer because he did not like the design"
    assert g["candidate_2"] == "The developer argued with the designer because she did not like the design"
    assert g["reference_1"] == "The developer argued with the designer because the developer did not like the design"
    assert g["BLEU_1"] == pytest.approx(0.704805091)
    assert g["METEOR_2"] == pytest.approx(0.990618718)


def test_long_scores():
    long = published.scores(["age"], ["BLEU", "chrF"])
    assert list(long.columns) == ["attribute", "pair_id", "metric", "score_1", "score_2"]
    assert len(long) == 2 * 71


def test_unknown_attribute_or_metric():
    with pytest.raises(ValueError, match="unknown attribute"):
        published.load("height")
    with pytest.raises(ValueError, match="unknown released metric"):
        published.scores(metrics=["BLEU-5"])


HEADER = "\t".join(["candidate", "reference", *published.METRICS]) + "\t\n"


def _row(cand, ref, value="0.5"):
    return "\t".join([cand, ref, *[value] * len(published.METRICS)]) + "\t\n"


@pytest.mark.parametrize("body,match", [
    (_row("a", "r") + "\t".join(["b", "r", *["0.5"] * 28]) + "\n", r"row 3: 30 fields, expected 31"),
    (_row("a", "r") + _row("b", "r", "x"), r"row 3: non-numeric score"),
    (_row("a", "r") + _row("", "r"), r"row 3: empty candidate"),
    (_row("a", "r"), r"1 data rows; rows must come in pairs"),
])
def test_malformed_rows_name_file_and_row(tmp_path, body, match):
    f = tmp_path / "bad.tsv"
    f.write_text(HEADER + body)
    with pytest.raises(published.DatasetError, match=f"bad.tsv.*{match}"):
        published.read_released(f)


def test_csv_quoted_texts_lose_their_quotes(tmp_path):
    f = tmp_path / "q.tsv"
    f.write_text(HEADER + _row('"a, b"', '"say ""hi"", c"') + _row("x", '"y"'))
    rows = published.read_released(f)
    assert rows["candidate"].tolist() == ["a, b", "x"]
    assert rows["reference"].tolist() == ['say "hi", c', "y"]
    age = published.load("age")
    assert not age["candidate_1"].str.startswith('"').any() and not age["reference_1"].str.startswith('"').any()
