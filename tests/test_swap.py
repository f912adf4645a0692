"""Gender swapper: hand-written sentences (ambiguous her/his included), case, punctuation, lexicon handling."""

from __future__ import annotations

import pytest

from metricbias.datasets import swap
from metricbias.datasets.swap import LexiconError, build_lexicon, gender_of, gendered_words, swap_gender


@pytest.fixture(scope="module")
def lex():
    return swap.lexicon()


@pytest.mark.parametrize("text, expected", [
    # her: possessive determiner -> his, object pronoun -> him
    ("I saw her book", "I saw his book"),
    ("I gave her the book", "I gave him the book"),
    ("She hugs her tightly.", "He hugs him tightly."),
    ("Give it to her.", "Give it to him."),
    ("A woman in a red shirt with her arm raised.", "A man in a red shirt with his arm raised."),
    ("A woman lies on her back.", "A man lies on his back."),
    # his: determiner -> her, possessive pronoun -> hers
    ("The book is his", "The book is hers"),
    ("The book is his.", "The book is hers."),
    ("A boy and his dog", "A girl and her dog"),
    ("A friend of his, and a friend of hers.", "A friend of hers, and a friend of his."),
    ("A person has his or her hands in the air.", "A person has her or his hands in the air."),
    # case
    ("Her dog runs.", "His dog runs."),
    ("His dog runs.", "Her dog runs."),
    ("HIS DOG RUNS", "HER DOG RUNS"),
    ("He said SHE would come", "She said HE would come"),
    # nouns, plurals, possessive 's, contractions, titles, names, punctuation kept
    ("Two girls walking down the street.", "Two boys walking down the street."),
    ("The woman's bag, the men's room.", "The man's bag, the women's room."),
    ("he's here; she's there!", "she's here; he's there!"),
    ("Mr. Smith met Mrs. Jones.", "Mrs. Smith met Mr. Jones."),
    ("John and Mary (brother and sister) smile.", "Mary and John (sister and brother) smile."),
    ("A waitress serves the actor.", "A waiter serves the actress."),
    ("Himself, herself.", "Herself, himself."),
])
def test_swap_sentences(lex, text, expected):
    assert swap_gender(text, lex).text == expected


def test_swap_is_an_involution_on_unambiguous_text(lex):
    text = "A man and his son watch a woman and her daughter."
    once = swap_gender(text, lex).text
    assert once == "A woman and her daughter watch a man and his son."
    assert swap_gender(once, lex).text == text


def test_unchanged_text_and_report(lex):
    res = swap_gender("A dog runs through the grass.", lex)
    assert res.text == "A dog runs through the grass." and not res.changed and res.replacements == []
    res = swap_gender("A boy, her dog.", lex)
    assert res.changed
    assert res.replacements == [(2, "boy", "girl"), (7, "her", "his")]


def test_names_swap_only_when_capitalised(lex):
    assert swap_gender("Jack lifts a jack.", lex).text == "Emma lifts a jack."


def test_excluded_and_neutral_words_are_kept(lex):
    # 'host' and 'tailor' are in the WinoBias lists but not gendered; 'miss' is usually a verb
    assert swap_gender("The host and the tailor miss the bus.", lex).text == "The host and the tailor miss the bus."


def test_gender_of_and_gendered_words(lex):
    assert gender_of("A man and his dog.", lex) == "male"
    assert gender_of("Her bike.", lex) == "female"
    assert gender_of("A man and a woman.", lex) == "mixed"
    assert gender_of("A dog in the park.", lex) == "none"
    assert gendered_words("The boy's mother", lex) == [("boy's", "male"), ("mother", "female")]


def test_swap_report(lex):
    report = swap.swap_report(["A dog.", "A girl.", "He runs."], lex)
    assert report["index"].tolist() == [1, 2]
    assert report["swapped"].tolist() == ["A boy.", "She runs."]
    assert report["replacements"].tolist() == ["girl→boy", "He→She"]


def test_lexicon_merges_winobias_and_project(lex):
    # from WinoBias only (with the reverse direction implied by the swap list)
    assert lex["duke"].counterpart == "duchess" and lex["duke"].gender == "male"
    assert lex["duchess"].counterpart == "duke" and lex["duchess"].gender == "female"
    # project rows fix WinoBias typos and win over it
    assert lex["chairwomen"].counterpart == "chairmen"
    assert lex["god"].counterpart == "goddess"
    assert "tailor" not in lex and "miss" not in lex
    assert lex["he"].source.startswith("project:")


def test_build_lexicon_orients_and_rejects():
    rows = [("he", "she", "pronoun", 2), ("-", "belle", "exclude", 3)]
    lex = build_lexicon(rows, [("actor", "actress", "x:1"), ("beau", "belle", "x:2")])
    assert lex["actress"].gender == "female" and lex["actor"].gender == "male"
    assert "beau" not in lex and "belle" not in lex
    with pytest.raises(LexiconError, match=r"bachelor -> spinster \(x:7\)"):
        build_lexicon(rows, [("bachelor", "spinster", "x:7")])


def test_project_lexicon_errors_name_the_line(tmp_path):
    path = tmp_path / "lex.tsv"
    path.write_text("# comment\nmale\tfemale\tkind\nhe\tshe\tpronoun\nking\tqueen\n")
    with pytest.raises(LexiconError, match=r"lex.tsv, line 4: expected 3 tab-separated cells"):
        swap.read_project_lexicon(path)
    path.write_text("male\tfemale\tkind\nking\tqueen\troyal\n")
    with pytest.raises(LexiconError, match=r"line 2: kind 'royal'"):
        swap.read_project_lexicon(path)
