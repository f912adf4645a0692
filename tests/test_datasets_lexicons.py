"""Lexicons and the attribute configuration (data/lexicons/)."""

from pathlib import Path

import pytest

from metricbias.datasets import lexicons
from metricbias.datasets.lexicons import LexiconError

REPO = Path(__file__).resolve().parents[1]


def test_gender_terms_are_aligned_by_form():
    lex = lexicons.load("gender")
    assert {"female", "male", "non_binary"} <= set(lex.groups)
    assert lex.counterparts("he", "non_binary") == ["they"]
    assert lex.counterparts("him", "female") == ["her"]
    assert lex.counterparts("his", "female") == ["her", "hers"]  # possessive and possessive pronoun rows
    subject = lex.aligned("subject")[0]
    assert subject == {"female": ["she"], "male": ["he"], "non_binary": ["they"]}
    assert lex.identity_terms("non_binary")[:5] == ["they", "them", "their", "theirs", "themself"]


def test_neutral_replacement_and_form_disambiguation():
    lex = lexicons.load("gender")
    assert lex.neutral_replacement("her", form="possessive") == "the person's"
    assert lex.neutral_replacement("her", form="object") == "the person"
    assert lex.neutral_replacement("her") == "the person"  # first row in file order: object
    assert lex.neutral_replacement("women") == "people"
    assert lex.neutral_replacement("mother") == "parent"
    assert lex.neutral_replacement("female") == ""  # adjectives are dropped
    with pytest.raises(LexiconError, match="no identity term"):
        lex.neutral_replacement("table")


def test_find_matches_whole_words_multiword_terms_and_possessives():
    race = lexicons.load("race")
    assert race.find("My African-American neighbors", ["black"]) == ["african american"]
    assert race.find("the whiteboard and the white house", ["white"]) == ["white"]
    assert race.find("nothing here", None) == []
    religion = lexicons.load("religion")
    assert religion.find("Mohammad's followers", ["muslim"]) == ["mohammad"]
    assert religion.group_of("Jews") == "jewish"


def test_attribute_names_resolve_to_their_lexicon():
    assert lexicons.load("gender_crows").name == "gender"
    names = lexicons.attributes()
    assert names[:6] == ["gender", "race", "religion", "physical_appearance", "age", "socioeconomic"]
    assert {"nationality", "disability", "sexual_orientation", "gender_crows", "stereoset_gender",
            "stereoset_race", "stereoset_religion", "stereoset_profession"} <= set(names)
    with pytest.raises(LexiconError, match="unknown attribute or lexicon 'nope'"):
        lexicons.load("nope")
    with pytest.raises(LexiconError, match="has no lexicon"):
        lexicons.load("stereoset_race")


def test_every_shipped_lexicon_loads_and_neutral_terms_are_not_identity_terms():
    for path in sorted((REPO / "data" / "lexicons").glob("*.yml")):
        if path.name == lexicons.CONFIG_FILE:
            continue
        lex = lexicons.read_lexicon(path)  # raises if a neutral term holds an identity term
        for row in lex.rows:
            assert set(row.terms) <= set(lex.groups), path
            assert row.form == "adj" or row.neutral, (path, row)


def _write(tmp_path, text):
    path = tmp_path / "x.yml"
    path.write_text(text)
    return path


def test_malformed_lexicons_name_the_file_and_row(tmp_path):
    bad_group = "groups: [a, b]\nneutral: {noun: person}\nterms:\n  - form: noun\n    a: x\n    c: y\n"
    with pytest.raises(LexiconError, match=r"x\.yml, terms row 1: unknown key\(s\) \['c'\]"):
        lexicons.read_lexicon(_write(tmp_path, bad_group))
    no_neutral = "groups: [a, b]\nterms:\n  - form: adj\n    a: x\n  - form: noun\n    a: y\n    b: z\n"
    with pytest.raises(LexiconError, match="terms row 2: form 'noun' has no neutral term"):
        lexicons.read_lexicon(_write(tmp_path, no_neutral))
    circular = "groups: [a, b]\nterms:\n  - form: noun\n    neutral: good x\n    a: x\n    b: y\n"
    with pytest.raises(LexiconError, match="neutral term 'good x' contains identity term"):
        lexicons.read_lexicon(_write(tmp_path, circular))
    with pytest.raises(LexiconError, match="at least two group"):
        lexicons.read_lexicon(_write(tmp_path, "groups: [a]\nterms: []\n"))


def test_malformed_config_names_the_attribute(tmp_path):
    path = tmp_path / "attributes.yml"
    path.write_text("fine:\n  source: stereoset\n  bias_types: [race]\n  abstract: a way\nbad:\n  source: tweets\n")
    with pytest.raises(LexiconError, match=r"attributes\.yml, attribute 'bad': 'source' must be one of"):
        lexicons.read_config(path)
    path.write_text("x:\n  source: crows_pairs\n  bias_types: [age]\n")
    with pytest.raises(LexiconError, match="source crows_pairs needs lexicon"):
        lexicons.read_config(path)
