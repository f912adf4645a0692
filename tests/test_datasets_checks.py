"""The rule checks of datasets.checks on hand-written sentences, and the source fixes (textedit.tidy, a/an)."""

import pandas as pd
import pytest

from metricbias.datasets import checks, lexicons
from metricbias.datasets.swap import swap_gender
from metricbias.datasets.textedit import detokenize, edit, indefinite_article, tidy, tokenize


def rules(text):
    return [rule for rule, _ in checks.text_findings(text)]


@pytest.mark.parametrize("rule, bad, good", [
    ("doubled_article", "Anita lived in an a neighborhood.", "Anita lived in a neighborhood."),
    ("doubled_article", "He asked the the chief.", "He asked the chief."),
    ("doubled_article", "She drove through the a neighborhood.", "She drove through the neighborhood."),
    ("article_agreement", "She is a upbeat woman.", "She is an upbeat woman."),
    ("article_agreement", "It took a hour and an university degree.", "It took an hour and a university degree."),
    ("article_agreement", "He is an one-man band.", "He is a one-man band and an FBI agent."),
    ("article_agreement", "A honest man.", "An honest man, a European, an 18-year-old, a US citizen."),
    ("leading_punctuation", ".Black people are welcome.", "Black people are welcome."),
    ("leading_punctuation", ", he said.", "\"Yes,\" he said. (Then he left.)"),
    ("lowercase_start", "sharon always says yes.", "Sharon always says yes."),
    ("lowercase_start", "\"the man left.\"", "\"The man left.\" 8 men stayed."),
    ("all_caps_word", "WE must build a fence.", "The CEO of the NAACP met the US envoy and AIDS patients."),
    ("all_caps_word", "He was ALWAYS late.", "He was always late."),
    ("inner_capital", "Most rAmericans hate it.", "McDonald and LeBron ate at O'Brien's with the CEOs."),
    ("inner_capital", "She might be a RitO.", "She might be a Rita."),
    ("inner_capital", "THe man left.", "The man left."),
    ("tautology", "The people there were all people, layabouts.", "The people there were all of a certain age."),
    ("tautology", "Muslim people are people.", "Boys will be boys; the nurse was the best; these are these."),
])
def test_each_text_rule_on_a_positive_and_a_negative_example(rule, bad, good):
    assert rule in rules(bad)
    assert rule not in rules(good)


def test_findings_name_the_offending_words():
    assert checks.text_findings("anita lived in an a house with a apple.") == [
        ("doubled_article", "an a"), ("article_agreement", "a apple"), ("lowercase_start", "anita")]
    assert checks.text_findings("The man left.") == []


def race():
    return lexicons.load("race")


def others():
    return [lexicons.load(n) for n in ("disability", "religion", "nationality")]


@pytest.mark.parametrize("rule, candidate_1, candidate_2", [
    ("identical_candidates", "Black people will steal anything.", "black people will steal anything."),
    ("other_attribute", "The black man laughed.", "The mentally ill man laughed."),
    ("other_attribute", "The Jews are greedy.", "The whites are greedy."),  # filed under race: Jews is religion
    ("non_identity_difference", "I hated the black man.", "I loved the black man."),
    ("non_identity_difference", "Saw a black prisoner.", "Saw a white worker."),
    ("non_identity_difference", "A black man ran.", "A man ran."),
])
def test_each_pair_rule_on_positive_examples(rule, candidate_1, candidate_2):
    found = checks.pair_findings(candidate_1, candidate_2, race(), others())
    assert [r for r, _ in found] == [rule]


def test_pair_rules_pass_a_clean_pair_and_skip_attributes_without_a_lexicon():
    assert checks.pair_findings("A black man ran.", "An Asian man ran.", race(), others()) == []
    assert checks.pair_findings("The Black kids' dad.", "The white kids' dad.", race(), others()) == []
    # StereoSet contrasts a trait, not a group: no lexicon, no attribute rules
    assert checks.pair_findings("He is poor.", "He is rich.", None) == []
    assert checks.pair_findings("Same.", "same.", None) == [("identical_candidates", "Same.")]
    detail = checks.pair_findings("The black man laughed.", "The mentally ill man laughed.", race(), others())[0][1]
    assert detail == "black / mentally ill (disability)"


def test_check_pairs_returns_one_row_per_finding_and_count_table_counts_pairs():
    pairs = pd.DataFrame({"attribute": ["race", "race", "age"], "source": "crows_pairs", "pair_id": ["r1", "r2", "a1"],
                          "candidate_1": ["the black man ran.", "A black man ran.", "An old man ran"],
                          "candidate_2": ["the white man ran.", "A mentally ill man ran.", "A young man ran"],
                          "reference": ["the man ran.", "A man ran.", "A man ran"]})
    found = checks.check_pairs(pairs, {"race": (race(), others())})
    assert list(found.columns) == checks.FINDING_COLUMNS
    assert found[["id", "column", "rule"]].values.tolist() == [
        ["r1", "candidate_1", "lowercase_start"], ["r1", "candidate_2", "lowercase_start"],
        ["r1", "reference", "lowercase_start"], ["r2", "pair", "other_attribute"]]
    table = checks.count_table(found, ["race", "age"])
    assert table.loc["race", "lowercase_start"] == 1 and table.loc["race", "other_attribute"] == 1
    assert table["any"].tolist() == [2, 0] and list(table.columns) == [*checks.RULES, "any"]


def test_introduced_counts_findings_per_text_and_rule():
    before = checks.check_texts(["a boy runs .", "The man sat."])
    after = checks.check_texts(["a girl runs .", "The woman sat with a actress."])
    new = checks.introduced(before, after)
    assert new[["id", "rule", "detail"]].values.tolist() == [["1", "article_agreement", "a actress"]]


def test_rule_table_describes_every_rule_in_one_line():
    table = checks.rule_table()
    assert table["rule"].tolist() == list(checks.RULES)
    assert all(d and "\n" not in d for d in table["description"])


@pytest.mark.parametrize("word, article", [
    ("apple", "an"), ("hour", "an"), ("honest", "an"), ("heir", "an"), ("umbrella", "an"), ("uncle", "an"),
    ("unimportant", "an"), ("urban", "an"), ("university", "a"), ("unicorn", "a"), ("use", "a"), ("usual", "a"),
    ("European", "a"), ("one", "a"), ("once", "a"), ("dog", "a"), ("FBI", "an"), ("US", "a"), ("CEO", "a"),
    ("8", "an"), ("18-year-old", "an"), ("11", "an"), ("1", "a"), ("110", "a"),
])
def test_indefinite_article_by_sound(word, article):
    assert indefinite_article(word) == article


@pytest.mark.parametrize("raw, fixed", [
    (".Black people are welcome", "Black people are welcome"),
    ("The assistant asked the the chief", "The assistant asked the chief"),
    ("She is a upbeat person and An honest one", "She is an upbeat person and An honest one"),
    ("i feel uneasy", "I feel uneasy"),
    ("\"Quote,\" he said in an hour.", "\"Quote,\" he said in an hour."),
])
def test_tidy_undoes_the_sources_slips(raw, fixed):
    assert tidy(raw) == fixed
    assert tidy(fixed) == fixed
    assert checks.text_findings(tidy(raw)) == []


def test_an_edit_with_its_own_article_replaces_the_one_before_it():
    tokens = tokenize("A trailer park is where Anita lived in a trailer park.")
    assert detokenize(edit(tokens, 9, 11, "a neighborhood")) == "A trailer park is where Anita lived in a neighborhood."
    assert detokenize(edit(tokens, 1, 3, "a neighborhood")) == "A neighborhood is where Anita lived in a trailer park."
    assert detokenize(edit(tokenize("They played an Italian one."), 3, 4, "")) == "They played a one."


def test_the_gender_swap_rechooses_an_article_before_a_swapped_word():
    assert swap_gender("An Emily and a Steven met an uncle.").text == "A Steven and an Emily met an aunt."
    assert swap_gender("AN ACTOR").text == "AN ACTRESS"


def test_chapter_two_counts_per_attribute_from_source_and_built_findings():
    from metricbias.book.reproduction import ch2_summary

    source = pd.DataFrame({"attribute": ["race", "race", "age"], "source": "crows_pairs", "source_id": ["1", "2", "3"],
                           "candidate_1": ["the black man ran.", ".Black men ran", "An old man ran"],
                           "candidate_2": ["the white man ran.", "White men ran", "A young man ran"]})
    found = checks.check_pairs(source, {"race": (race(), others())}, id_column="source_id")
    pairs = source.assign(pair_id=["race-1", "race-2", "age-3"], reference=["The man ran.", "Men ran", "A man ran"])
    excluded = pd.DataFrame({"attribute": ["race", "age"], "reason": ["check:tautology", "other_attribute"],
                             "detail": ["reference: men are men", "x"], "candidate_1": ["a", "b"],
                             "candidate_2": ["c", "d"]})
    counts = ch2_summary.check_counts(source, found, pairs, checks.check_pairs(pairs.head(0)), excluded, ["race", "age"])
    assert counts.set_index("attribute").loc["race", ["source pairs", "lowercase_start", "leading_punctuation",
                                                      "any rule", "built pairs", "left out by a check",
                                                      "caught in the built set"]].tolist() == [2, 1, 1, 2, 2, 1, 0]
    totals = ch2_summary.check_totals(counts, excluded)
    assert (totals["source_any"], totals["left_out"], totals["other_attribute_excluded"]) == (2, 1, 1)
    assert ch2_summary.check_exclusions(excluded).values.tolist() == [
        ["race", "tautology", "reference: men are men", "a", "c"]]
