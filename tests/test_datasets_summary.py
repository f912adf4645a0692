"""Summaries of the built datasets (chapter 2): hand-built frames with known counts, and the lexicon side effect
that chapter 2 documents (a new lexicon changes what other CrowS-Pairs attributes build)."""

import pandas as pd
import pytest

from conftest import write_crows_project
from metricbias.book.reproduction import ch2_summary
from metricbias.datasets import built, lexicons

PAIRS = pd.DataFrame({
    "attribute": ["gender", "gender", "gender", "race", "race"],
    "source": ["winobias", "winobias", "winobias", "crows_pairs", "crows_pairs"],
    "source_id": ["type1.dev:1", "type1.dev:2", "type2.test:7", "10", "11"],
    "group_1": ["female", "male", "female", "black", "white"],
    "group_2": ["male", "female", "male", "white", "black"],
    "candidate_1": ["she ran", "he ran", "she sat", "a black man ran", "the white man sat"],
    "candidate_2": ["he ran", "she ran", "he sat", "a white man ran", "the black man sat down"],
    "reference_1": ["the nurse ran", "the nurse ran", "the cook sat", "a man ran", "the man sat"],
    "reference_method": ["antecedent", "antecedent", "antecedent", "drop", "drop"],
})
EXCLUDED = pd.DataFrame([("race", "crows_pairs", "1", "no_identity_term", "'Jamal' / 'John'"),
                         ("race", "crows_pairs", "2", "no_identity_term", "'not' / ''"),
                         ("religion", "crows_pairs", "3", "no_identity_term", "'hated' / 'loved'"),
                         ("race", "crows_pairs", "4", "same_group", "'Amish' / 'Christian'"),
                         ("gender", "winobias", "type1.dev:9", "differs_beyond_pronouns", "x")],
                        columns=["attribute", "source", "source_id", "reason", "detail"]).assign(candidate_1="a",
                                                                                                candidate_2="b")


def test_winobias_subsets_count_pairs_per_file():
    assert ch2_summary.winobias_subsets(PAIRS) == {"type1_dev": 2, "type2_test": 1}


def test_exclusion_reasons_count_pairs_per_source_most_first():
    out = ch2_summary.exclusion_reasons(EXCLUDED)
    assert out[["source", "reason", "pairs"]].values.tolist() == [
        ["winobias", "differs_beyond_pronouns", 1],
        ["crows_pairs", "no_identity_term", 3], ["crows_pairs", "same_group", 1]]
    assert out.loc[2, "meaning"] == built.REASONS["crows_pairs"]["same_group"]


def test_exclusion_grid_and_reference_methods_keep_the_attribute_order():
    grid = ch2_summary.exclusion_grid(EXCLUDED, ["race", "gender", "religion"])
    assert grid["attribute"].tolist() == ["race", "gender", "religion"]
    assert grid["total"].tolist() == [3, 1, 1]
    assert grid.loc[0, "no_identity_term"] == 2 and grid.loc[0, "same_group"] == 1
    methods = ch2_summary.reference_methods(PAIRS, ["race", "gender"])
    assert methods.values.tolist() == [["race", 0, 2], ["gender", 3, 0]]


def test_exclusion_examples_take_the_first_of_each_reason_of_one_source():
    out = ch2_summary.exclusion_examples(EXCLUDED, per_reason=1)
    assert out.values.tolist() == [["no_identity_term", "race", "'Jamal' / 'John'"],
                                   ["same_group", "race", "'Amish' / 'Christian'"]]


def test_long_texts_one_row_per_text_keys_on_the_first_row_only():
    out = ch2_summary.long_texts(PAIRS.head(2), {"candidate_1": "candidate 1 ({group_1})", "reference_1": "reference"},
                             keys=("attribute",))
    assert out.values.tolist() == [["gender", "candidate 1 (female)", "she ran"], ["", "reference", "the nurse ran"],
                                   ["gender", "candidate 1 (male)", "he ran"], ["", "reference", "the nurse ran"]]
    two_keys = ch2_summary.long_texts(PAIRS.head(1), {"reference_1": "reference"}, keys=("source", "attribute"))
    assert two_keys.values.tolist() == [["winobias, gender", "reference", "the nurse ran"]]


def test_example_pairs_take_per_method_pairs_of_each_source_and_method():
    out = ch2_summary.example_pairs(PAIRS, per_method=1, seed=0)
    assert len(out) == 2 * 3  # (crows_pairs, drop) and (winobias, antecedent), three texts each
    assert out["example"].tolist()[::3] == ["crows_pairs, drop, race", "winobias, antecedent, gender"]
    assert out["role"].tolist()[2] == "reference"


def test_differing_tokens_count_the_longer_side_of_each_span():
    assert ch2_summary.differing_tokens("a black man ran", "a white man ran") == 1
    assert ch2_summary.differing_tokens("the white man sat", "the black man sat down") == 2
    assert ch2_summary.differing_tokens("same", "same") == 0
    out = ch2_summary.mean_differing_tokens(PAIRS)
    assert out.values.tolist() == [["gender", 3, 1.0], ["race", 2, 1.5]]


def test_lexicon_rows_and_counterparts_of_the_gender_lexicon():
    gender = lexicons.load("gender")
    rows = ch2_summary.lexicon_rows(gender, 2)
    assert rows.loc[0, ["form", "female", "male"]].tolist() == ["subject", "she", "he"]
    assert list(rows.columns) == ["form", "neutral", *gender.groups]
    out = ch2_summary.counterparts(gender, ["him", "his"], ["female", "male"])
    assert out.values.tolist() == [["him", "her", "him"], ["his", "her, hers", "his"]]


HEADER = ",sent_more,sent_less,stereo_antistereo,bias_type,annotations,anon_writer,anon_annotators\n"
CROWS = HEADER + '0,"The black chef was late.","The vegan chef was late.",stereo,race-color,[],a,[]\n' \
                 '1,"A black man ran.","A white man ran.",stereo,race-color,[],a,[]\n'
LEXICON = """attribute: {name}
groups: [{a}, {b}]
neutral: {{adj: "", noun: person, plural: people}}
terms:
  - form: adj
    {a}: [{a}]
    {b}: [{b_term}]
"""
RACE = LEXICON.format(name="race", a="black", b="white", b_term="white")
DIET = LEXICON.format(name="diet", a="vegan", b="carnivore", b_term="carnivorous")


@pytest.fixture
def race_only(tmp_project):
    return write_crows_project(tmp_project, CROWS, {"race": RACE, "diet": DIET},
                               "race:\n  source: crows_pairs\n  bias_types: [race-color]\n  lexicon: race\n")


def test_a_new_lexicon_changes_another_attributes_exclusions(race_only):
    """Chapter 2: every CrowS-Pairs attribute looks a span up in every configured lexicon, so adding one turns
    another attribute's `not_in_lexicon` exclusion into `other_attribute`: the pair contrasts two attributes."""
    pairs, excluded = built.build_attribute("race")
    assert excluded[["source_id", "reason"]].values.tolist() == [["0", "not_in_lexicon"]]
    assert pairs["source_id"].tolist() == ["1"]
    with open(race_only / "attributes.yml", "a") as fh:
        fh.write("diet:\n  source: crows_pairs\n  bias_types: [diet]\n  lexicon: diet\n")
    pairs, excluded = built.build_attribute("race")
    assert excluded[["source_id", "reason", "detail"]].values.tolist() == [
        ["0", "other_attribute", "'black' / 'vegan' (diet)"]]
    assert pairs[["source_id", "group_1", "group_2", "reference"]].values.tolist() == [
        ["1", "black", "white", "A man ran."]]


def test_held_out_report_reads_the_shipped_paraphrasers_provenance():
    """models/para-all-MiniLM-L6-v2 was trained on MRPC and STS-B pairs; every Flickr8k pair is an evaluation text."""
    report = ch2_summary.held_out_report(["para-all-MiniLM-L6-v2", "no-such-backbone"]).set_index("source")
    assert report["unit"].unique().tolist() == ["pairs"]
    assert report.loc["flickr8k", ["read", "held out (dropped)", "used"]].tolist() == [3999, 3999, 0]
    assert (report["read"] - report["held out (dropped)"] == report["used"]).all()
    assert report.loc["mrpc", "used"] == 1607


def test_sample_sizes_count_the_draw_per_attribute():
    full = pd.DataFrame({"attribute": ["a"] * 5 + ["b"] * 2, "pair_id": range(7)})
    drawn = pd.concat([full[full.attribute == "a"].head(3), full[full.attribute == "b"]])
    out = ch2_summary.sample_sizes(drawn, full)
    assert out.values.tolist() == [["a", 5, 3], ["b", 2, 2]]
    assert (ch2_summary.sample_sizes(full, full)["scored"] == [5, 2]).all()
