"""Meta-evaluation loaders: the generic JSONL format (and its errors) and the three mirrored sets."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metricbias.datasets import meta_eval
from metricbias.datasets.meta_eval import DatasetError
from tests.conftest import real_raw_location

GOOD = [
    {"item_id": "d1", "system_id": "A", "hypothesis": "A man rides a horse.", "references": ["A man on a horse.", "A rider."],
     "human": {"overall": 4, "fluency": 3.5}},
    {"item_id": "d1", "system_id": "B", "hypothesis": "A dog.", "references": ["A man on a horse.", "A rider."],
     "human": {"overall": 1, "fluency": 4}},
    {"item_id": 2, "system_id": "C", "hypothesis": "Her horse runs.", "references": ["A horse runs."],
     "human": {"fluency": 2, "overall": 2.5}},
]


def write_lines(path, lines):
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines))
    return path


def test_jsonl_loads(tmp_path):
    ds = meta_eval.load(str(write_lines(tmp_path / "mine.jsonl", GOOD)))
    assert ds.name == "mine" and len(ds) == 3
    assert ds.aspects == ["overall", "fluency"]
    assert ds.frame["item_id"].tolist() == ["d1", "d1", "2"]
    assert ds.frame["references"][0] == ("A man on a horse.", "A rider.")
    assert ds.human("overall").tolist() == [4.0, 1.0, 2.5]
    assert ds.levels == ("example", "system")
    with pytest.raises(DatasetError, match="no human aspect 'clarity'"):
        ds.human("clarity")


def test_jsonl_roundtrip(tmp_path):
    ds = meta_eval.load_jsonl(write_lines(tmp_path / "a.jsonl", GOOD))
    again = meta_eval.load_jsonl(meta_eval.write_jsonl(ds, tmp_path / "b.jsonl"))
    assert again.frame.equals(ds.frame)


@pytest.mark.parametrize("bad, message", [
    ('{"item_id": "d9", "system_id": "A", "hypothesis": "x"', "not valid JSON"),
    ('["a", "b"]', "expected a JSON object"),
    ({"item_id": "d9", "system_id": "A", "references": ["r"], "human": {"overall": 1, "fluency": 1}},
     r"missing key\(s\) \['hypothesis'\]"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": " ", "references": ["r"], "human": {"overall": 1, "fluency": 1}},
     "hypothesis must be a non-empty string"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": "h", "references": "r", "human": {"overall": 1, "fluency": 1}},
     "references must be a non-empty list"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": "h", "references": ["r", ""], "human": {"overall": 1, "fluency": 1}},
     "references must be a non-empty list of non-empty strings"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": "h", "references": ["r"], "human": {"overall": "good", "fluency": 1}},
     "human score for 'overall' must be a finite number"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": "h", "references": ["r"], "human": {"overall": 1}},
     "aspects \\['overall'\\] differ from the first line's"),
    ({"item_id": None, "system_id": "A", "hypothesis": "h", "references": ["r"], "human": {"overall": 1, "fluency": 1}},
     "item_id must be a non-empty string or an integer"),
])
def test_jsonl_malformed_line_names_file_and_line(tmp_path, bad, message):
    path = write_lines(tmp_path / "judged.jsonl", [GOOD[0], GOOD[1], "", bad])
    with pytest.raises(DatasetError, match=rf"judged.jsonl, line 4: {message}"):
        meta_eval.load_jsonl(path)


def test_jsonl_file_level_errors(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        meta_eval.load_jsonl(tmp_path / "missing.jsonl")
    with pytest.raises(DatasetError, match="the file is empty"):
        meta_eval.load_jsonl(write_lines(tmp_path / "empty.jsonl", []))
    with pytest.raises(DatasetError, match=r"\(d1, A\) occurs twice"):
        meta_eval.load_jsonl(write_lines(tmp_path / "dup.jsonl", [GOOD[0], GOOD[0]]))
    with pytest.raises(DatasetError, match="unknown meta-evaluation dataset 'flickr30k'"):
        meta_eval.load("flickr30k")


def test_swapped_set_keeps_human_scores_and_reports(tmp_path):
    ds = meta_eval.load_jsonl(write_lines(tmp_path / "a.jsonl", GOOD))
    sw = ds.swapped()
    assert sw.frame["hypothesis"].tolist() == ["A woman rides a horse.", "A dog.", "His horse runs."]
    assert sw.frame["references"][0] == ("A woman on a horse.", "A rider.")
    assert np.array_equal(sw.human("overall"), ds.human("overall"))
    assert sw.swap_report["where"].tolist() == ["hypothesis 0", "hypothesis 2", "reference 0 of hypothesis 0"]
    assert ds.frame["hypothesis"][0] == "A man rides a horse."  # the original is untouched


@pytest.fixture(scope="module")
def real_data():
    real_raw_location()  # skips without raw data


def test_flickr8k(real_data):
    ds = meta_eval.load_flickr8k()
    assert len(ds) == 5822 and ds.frame["item_id"].nunique() == 1000
    assert ds.frame["references"].map(len).eq(5).all()
    assert ds.levels == ("example",) and ds.aspects == ["overall"]
    first = ds.frame.iloc[1]
    assert first["hypothesis"] == "A girl wearing a yellow shirt and sunglasses smiles."
    assert (first["judge_1"], first["judge_2"], first["judge_3"]) == (1, 1, 2)
    assert first["human:overall"] == pytest.approx(4 / 3)
    assert "A blond woman is on the street hailing a taxi." in first["references"]
    assert len(ds.sample(10, seed=1).frame["item_id"].unique()) == 10


def test_realsumm(real_data):
    ds = meta_eval.load_realsumm()
    assert len(ds) == 2400 and ds.frame["item_id"].nunique() == 100 and ds.frame["system_id"].nunique() == 24
    assert ds.levels == ("system",) and ds.aspects == ["litepyramid_recall"]
    assert ds.frame["references"].map(len).eq(1).all()
    assert ds.human("litepyramid_recall").min() >= 0 and ds.human("litepyramid_recall").max() <= 1


def test_wmt19_darr(real_data):
    ds = meta_eval.load("wmt19-kk-en")
    assert len(ds) == 9728 and ds.levels == ("pairs",)
    row = ds.frame.iloc[0]
    assert row["better_system"] == "CUNI-T2T-transfer-kken.6436" and row["worse_system"] == "UMD.6736"
    assert row["reference"].startswith("A mobile surgery unit")
