"""Counterfactual training data (metricbias.mitigation.cda)."""

from __future__ import annotations

import pandas as pd
import pytest

from metricbias.mitigation import cda

SWAP = cda._default_swap()  # the project's gender swapper (metricbias.datasets.swap)
NEUTRAL = cda.neutralize_gender


def test_triples_of_a_gendered_sentence():
    triples = cda.counterfactual_triples("A man is playing a flute.", "A woman plays the flute.", SWAP, NEUTRAL)
    assert triples == [
        ("self", "A man is playing a flute.", "A woman is playing a flute.", "A person is playing a flute."),
        ("pair", "A man is playing a flute.", "A woman is playing a flute.", "A person plays the flute."),
    ]
    assert cda.counterfactual_triples("A cat sleeps.", "A dog barks.", SWAP, NEUTRAL) == []
    # a sentence without a partner (StereoSet intrasentence) gives only the self triple
    assert [t[0] for t in cda.counterfactual_triples("Her father cooks.", "", SWAP, NEUTRAL)] == ["self"]


def _tables():
    stsb = pd.DataFrame({"pair_id": ["s1", "s2", "s3"],
                         "sentence_1": ["A man is running.", "A cat sleeps.", "He saw her."],
                         "sentence_2": ["A woman runs.", "A dog barks.", "The dev sentence."]})
    stereo = pd.DataFrame({"pair_id": ["x1"], "sentence_1": ["Her mother is kind."], "sentence_2": [""]})
    return {"stsb": stsb, "stereoset": stereo}


def test_build_counts_and_held_out_texts():
    data = cda.build(SWAP, NEUTRAL, sources_=("stsb", "stereoset"), pair_tables=_tables(),
                     exclude=["the dev sentence"])
    counts = data.counts.set_index("source")
    assert counts.loc["stsb", "pairs_read"] == 3
    assert counts.loc["stsb", "dropped_held_out"] == 1  # s3 shares a sentence with the excluded text
    assert counts.loc["stsb", "gendered_sentences"] == 2  # both sentences of s1
    assert counts.loc["stsb", "debias_triples"] == 4
    assert counts.loc["stsb", "kd_pairs"] == 2  # s1, s2: every kept pair distils, gendered or not
    assert counts.loc["stereoset", "kd_pairs"] == 0  # StereoSet is used for debiasing only
    assert counts.loc["stereoset", "debias_triples"] == 1
    assert counts.loc["total (deduplicated)", "debias_triples"] == len(data.debias) == 5
    assert set(data.kd["pair_id"]) == {"s1", "s2"}
    row = data.debias[data.debias["pair_id"] == "x1"].iloc[0]
    assert (row.c1, row.c2, row.r) == ("Her mother is kind.", "His father is kind.", "The person's parent is kind.")
    assert "He saw her." not in set(data.debias["c1"])


def test_validation_split_keeps_source_pairs_together():
    data = cda.build(SWAP, NEUTRAL, sources_=("stsb", "stereoset"), pair_tables=_tables())
    train, val = data.split(0.5, seed=0)
    assert not set(train.debias["pair_id"]) & set(val.debias["pair_id"])
    assert len(train.debias) + len(val.debias) == len(data.debias)
    assert len(train.kd) + len(val.kd) == len(data.kd)
    again = data.split(0.5, seed=0)[1]
    assert list(again.debias["c1"]) == list(val.debias["c1"])


def test_no_gendered_sentence_is_an_error():
    with pytest.raises(ValueError, match="no gendered sentence"):
        cda.build(lambda s: s, NEUTRAL, sources_=("stsb",), pair_tables=_tables())


def test_real_pair_files_and_dev_pairs_kept_out():
    train = cda.read_sentence_pairs("stsb", "train")
    dev = cda.read_sentence_pairs("stsb", "dev")
    mrpc = cda.read_sentence_pairs("mrpc", "train")
    assert len(train) == 4249 and len(dev) == 1500 and len(mrpc) == 2576
    assert train.iloc[0]["sentence_1"] == "A plane is taking off."
    assert set(cda.read_mrpc("train")["label"]) == {0, 1}
    data = cda.build(SWAP, NEUTRAL, sources_=("stsb", "mrpc"))
    dev_texts = {cda.normalize_text(s) for src in ("stsb", "mrpc") for frame in [cda.read_sentence_pairs(src, "dev")]
                 for s in [*frame["sentence_1"], *frame["sentence_2"]]}
    used = {cda.normalize_text(s) for s in [*data.kd["candidate"], *data.kd["reference"], *data.debias["c1"]]}
    assert not used & dev_texts
    counts = data.counts.set_index("source")
    assert counts.loc["stsb", "dropped_held_out"] > 0
    assert counts.loc["stsb", "pairs_used"] + counts.loc["stsb", "dropped_held_out"] == 4249


def test_stereoset_gender_examples():
    pairs = cda.stereoset_gender_pairs()
    inter = pairs[pairs["pair_id"].str.startswith("stereoset-inter")]
    intra = pairs[pairs["pair_id"].str.startswith("stereoset-intra")]
    assert len(inter) == 3 * 242 and len(intra) == 3 * 255  # three sentences per gender item
    assert (intra["sentence_2"] == "").all() and (inter["sentence_2"] != "").all()


def test_malformed_pair_file_names_file_and_line(tmp_project):
    from conftest import write_registry

    body = b"1\t1\t2\tA man sings.\tA woman sings.\n1\tbroken line\n"
    write_registry(tmp_project, {"glue/MRPC/train.txt": body})
    (tmp_project / "data" / "raw" / "glue" / "MRPC").mkdir(parents=True)
    (tmp_project / "data" / "raw" / "glue" / "MRPC" / "train.txt").write_bytes(body)
    with pytest.raises(ValueError, match=r"train\.txt, line 2: 2 tab-separated fields"):
        cda.read_mrpc("train")


@pytest.mark.parametrize("text, neutral", [
    ("She lent her car to him.", "The person lent the person's car to the person."),  # possessive vs object her
    ("The woman gave her the book.", "The person gave the person the book."),
    ("An actress and an actor.", "A performer and a performer."),  # a/an follows the new word
    ("Mr. Smith met a waitress and her husband.", "Smith met a person and the person's spouse."),  # titles dropped
    ("He's a man's man.", "The person is a person's person."),  # contraction and possessive 's
    ("My ex-fiance left.", "My ex-person left."),  # inside a hyphenated word
    ("A cat sleeps.", "A cat sleeps."),
])
def test_neutral_references_from_the_gender_lexicon(text, neutral):
    assert cda.neutralize_gender(text) == neutral


def test_default_swapper_makes_the_counterfactual():
    swap = cda._default_swap()
    assert cda.counterfactual_triples("The man fed her dog.", "", swap, cda.neutralize_gender) == [
        ("self", "The man fed her dog.", "The woman fed his dog.", "The person fed the person's dog.")]
