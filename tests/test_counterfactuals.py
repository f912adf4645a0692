import pandas as pd
import pytest

from metricbias.datasets import counterfactuals as cf
from metricbias.datasets.lexicons import read_lexicon

LEXICON = """\
attribute: toy
groups: [female, male, non_binary]
neutral:
  adj: ""
  subject: the person
  object: the person
  possessive: the person's
  noun: person
terms:
  - form: subject
    female: she
    male: he
    non_binary: they
  - form: object
    female: her
    male: him
    non_binary: them
  - form: possessive
    female: her
    male: his
    non_binary: their
  - form: noun
    female: [woman, lady]
    male: [man, gentleman]
  - form: adj
    female: [female]
    male: [male]
    non_binary: [nonbinary]
"""


@pytest.fixture
def lexicon(tmp_path):
    path = tmp_path / "toy.yml"
    path.write_text(LEXICON)
    return read_lexicon(path)


def test_differing_spans_drop_articles_and_punctuation():
    spans = cf.differing_spans("He met an Italian.", "He met a German.")
    assert [(s.text_1, s.text_2) for s in spans] == [("Italian", "German")]
    assert cf.differing_spans("same text", "same text") == []


def test_one_candidate_per_group_from_the_aligned_row(lexicon):
    made, reason, _ = cf.substitute("The clerk said she was tired", "The clerk said he was tired",
                                    "female", "male", lexicon, ["female", "male", "non_binary"])
    assert reason is None
    # non-binary "they" takes plural agreement: was -> were
    assert made == {"female": "The clerk said she was tired", "male": "The clerk said he was tired",
                    "non_binary": "The clerk said they were tired"}


def test_her_takes_the_row_of_its_counterpart(lexicon):
    # "her" vs "his" is possessive (-> their), "her" vs "him" is object (-> them)
    made, _, _ = cf.substitute("I took her book", "I took his book", "female", "male", lexicon,
                               ["male", "non_binary"])
    assert made == {"male": "I took his book", "non_binary": "I took their book"}
    made, _, _ = cf.substitute("I told her so", "I told him so", "female", "male", lexicon, ["non_binary"])
    assert made == {"non_binary": "I told them so"}


@pytest.mark.parametrize("sentence, expect", [
    ("She always needs help", "They always need help"),  # adverb skipped, -s dropped
    ("she watches TV", "they watch TV"),
    ("she tries hard", "they try hard"),
    ("she has left", "they have left"),
    ("she needed help", "they needed help"),  # past tense: unchanged
])
def test_they_agreement(lexicon, sentence, expect):
    other = sentence.replace("She", "He").replace("she", "he")
    made, _, _ = cf.substitute(sentence, other, "female", "male", lexicon, ["non_binary"])
    assert made["non_binary"] == expect


def test_first_term_of_each_group_case_and_article(lexicon):
    # "lady" is group female's second term: every group is realized by its first term
    made, _, _ = cf.substitute("A lady came", "A gentleman came", "female", "male", lexicon, ["female", "male"])
    assert made == {"female": "A woman came", "male": "A man came"}
    # the indefinite article follows the new term
    made, _, _ = cf.substitute("a female pilot", "a male pilot", "female", "male", lexicon, ["non_binary"],
                               casing={"nonbinary": "Nonbinary"})
    assert made == {"non_binary": "a Nonbinary pilot"}


def test_unusable_pairs_have_a_reason(lexicon):
    assert cf.substitute("a woman", "a man", "female", "male", lexicon, ["non_binary"])[1] == "no_counterpart"
    assert cf.substitute("a dog barked", "a cat barked", "female", "male", lexicon, ["male"])[1] == "not_a_term"
    assert cf.substitute("x she", "x he", "race:white", "male", lexicon, ["male"])[1] == "cross_attribute"


def test_build_rows_backgrounds_sampling_and_exclusions(lexicon):
    pairs = pd.DataFrame({
        "pair_id": ["p0", "p1", "p2"],
        "group_1": ["female", "male", "female"], "group_2": ["male", "female", "male"],
        "candidate_1": ["she ran", "his cat", "a woman sang"],
        "candidate_2": ["he ran", "her cat", "a man sang"],
        "reference_1": ["the person ran", "the person's cat", "a person sang"],
    })
    rows, excluded = cf.build(pairs, lexicon, ["female", "male", "non_binary"], attribute="toy")
    assert excluded[["source", "reason"]].values.tolist() == [["p2", "no_counterpart"]]
    p1 = rows[rows.source == "p1"].set_index("group")
    assert p1.loc["non_binary", "candidate"] == "their cat"
    assert p1.loc[cf.NEUTRAL, "candidate"] == "the person's cat"
    assert sorted(p1.loc[cf.ORIGINAL, "candidate"]) == ["her cat", "his cat"]
    assert (rows["reference"] == rows["source"].map(pairs.set_index("pair_id")["reference_1"])).all()
    one, _ = cf.build(pairs, lexicon, ["female", "male", "non_binary"], sample_size=1, seed=0)
    assert one["source"].nunique() == 1
    with pytest.raises(ValueError, match="at least two of the lexicon's"):
        cf.build(pairs, lexicon, ["female", "martian"])


def test_preferred_casing_ignores_sentence_starts():
    casing = cf.preferred_casing(["Asian food is good.", "I like Asian food", "an asian bowl", "We met Asian folks"])
    assert casing["asian"] == "Asian"
    assert "we" not in casing


def test_real_sets_for_gender_race_and_religion():
    from metricbias.datasets import lexicons

    groups = {"gender": ["female", "male", "non_binary"], "race": ["black", "white", "asian", "hispanic"],
              "religion": ["christian", "muslim", "jewish"]}
    rows, excluded = cf.build_attributes(groups, sample_size=40, seed=1)
    assert set(excluded["reason"]) <= set(cf.REASONS)
    for attribute, t in groups.items():
        block = rows[rows["attribute"] == attribute]
        assert block["source"].nunique() == 40
        per_source = block.groupby("source")["group"].apply(list)
        assert all(sorted(g) == sorted(t + [cf.ORIGINAL, cf.ORIGINAL, cf.NEUTRAL]) for g in per_source)
        lex = lexicons.load(attribute)
        compare = [("female", "male")] if attribute == "gender" else list(zip(t, t[1:]))
        for source, cands in block[block["group"].isin(t)].groupby("source"):
            text = cands.set_index("group")["candidate"]
            assert text.nunique() == len(t), (source, text.tolist())
            # two groups' candidates differ only in identity terms of those groups
            for a, b in compare:
                for span in cf.differing_spans(text[a], text[b]):
                    assert any(e.group == a for e in lex.lookup(span.text_1)) or span.text_1.endswith("'s"), \
                        (source, span)


def test_cli_writes_the_sets_and_config_errors_are_clear(tmp_path, capsys):
    from metricbias import cli

    assert cli.main(["build-counterfactuals", "--attributes", "religion", "--out", str(tmp_path)]) == 0
    written = pd.read_csv(tmp_path / "religion.tsv", sep="\t")
    assert list(written.columns) == cf.COLUMNS and written["source"].nunique() > 50
    assert (tmp_path / "religion.excluded.tsv").exists()
    assert "religion" in capsys.readouterr().out
    assert cli.main(["build-counterfactuals", "--attributes", "age", "--out", str(tmp_path)]) == 2
    assert "no counterfactual groups configured for ['age']" in capsys.readouterr().err
    bad = tmp_path / "bad.yml"
    bad.write_text("gender: [female]\n")
    with pytest.raises(ValueError, match="at least two group names"):
        cf.config(bad)
