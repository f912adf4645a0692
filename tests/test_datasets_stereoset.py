"""StereoSet intrasentence pairs: the context's blank neutralized."""

import json

import pytest

from metricbias.datasets import stereoset
from metricbias.datasets.published import DatasetError


@pytest.mark.parametrize("context, stereo, anti, expected", [
    ("The BLANK mover carried the couch.", "The strong mover carried the couch.",
     "The weak mover carried the couch.", ("The mover carried the couch.", "drop")),
    ("BLANK people live in Ethiopia.", "Poor people live in Ethiopia.", "Rich people live in Ethiopia.",
     ("People live in Ethiopia.", "drop")),
    ("The musician was very BLANK.", "The musician was very creative.", "The musician was very boring.",
     ("The musician was a certain way.", "abstract")),
    # the edit is made on the stereotype sentence: its casing is kept
    ("Most Bengali People are BLANK", "most bengali people are poor", "most bengali people are rich",
     ("most bengali people are a certain way", "abstract")),
    ("The Crimean BLANK is a hallmark.", "The Crimean wine is a hallmark.", "The Crimean art is a hallmark.",
     (None, "blank_not_droppable")),
    ("He is BLANK and BLANK.", "He is a b.", "He is c d.", (None, "blank_count")),
    ("The chess player was BLANK.", "The chess players were asian.", "The chess player was hispanic.",
     (None, "sentence_does_not_match_context")),
    ("The BLANK man likes the old car.", "The old man likes the old car.", "The young man likes the old car.",
     (None, "fill_word_survives")),
])
def test_neutral_context(context, stereo, anti, expected):
    assert stereoset.neutral_context(context, stereo, anti, "a certain way") == expected


def _test(ident, context, stereo, anti, bias_type="race"):
    return {"id": ident, "target": "Ethiopian", "bias_type": bias_type, "context": context, "sentences": [
        {"sentence": stereo, "gold_label": "stereotype"}, {"sentence": anti, "gold_label": "anti-stereotype"},
        {"sentence": "x", "gold_label": "unrelated"}]}


def test_build_from_a_small_file(tmp_path):
    path = tmp_path / "dev.json"
    tests = [_test("a1b2c3d4e5f6a7", "Ethiopian men are BLANK.", "Ethiopian men are skinny.",
                   "Ethiopian men are fat."),
             _test("ffff", "Ethiopian BLANK are nice.", "Ethiopian runners are nice.", "Ethiopian cooks are nice."),
             _test("0000", "He is BLANK.", "He is a.", "He is b.", bias_type="gender")]
    path.write_text(json.dumps({"version": "1.0", "data": {"intrasentence": tests}}))
    rows, excluded = stereoset.build("stereoset_race", ["race"], "a certain way", path=path)
    assert rows == [{"pair_id": "stereoset_race-a1b2c3d4e5f6", "attribute": "stereoset_race", "source": "stereoset",
                     "source_id": "a1b2c3d4e5f6a7", "group_1": "Ethiopian", "group_2": "Ethiopian",
                     "candidate_1": "Ethiopian men are skinny.", "candidate_2": "Ethiopian men are fat.",
                     "reference": "Ethiopian men are a certain way.", "direction": "stereo",
                     "reference_method": "abstract"}]
    assert [(e["source_id"], e["reason"]) for e in excluded] == [("ffff", "blank_not_droppable")]


def test_malformed_tests_name_the_file_and_entry(tmp_path):
    path = tmp_path / "dev.json"
    bad = _test("abc", "He is BLANK.", "He is a.", "He is b.")
    bad["sentences"][1]["gold_label"] = "stereotype"
    path.write_text(json.dumps({"data": {"intrasentence": [_test("x", "A BLANK.", "A b.", "A c."), bad]}}))
    with pytest.raises(DatasetError, match=r"dev\.json, data\.intrasentence\[1\] \(id abc\): needs exactly one"):
        stereoset.read(path)
    del bad["context"]
    path.write_text(json.dumps({"data": {"intrasentence": [bad]}}))
    with pytest.raises(DatasetError, match=r"data\.intrasentence\[0\]: missing or malformed field"):
        stereoset.read(path)
    path.write_text("{not json")
    with pytest.raises(DatasetError, match="not valid JSON"):
        stereoset.read(path)
