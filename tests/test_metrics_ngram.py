"""n-gram metrics: hand-worked values, identical/disjoint texts, degenerate inputs, signatures, WordNet."""

import math
import time

import numpy as np
import pytest

from metricbias import metrics, wordnet
from metricbias.cache import ScoreCache
from metricbias.metrics.base import MetricError
from metricbias.metrics.ngram import cider_d, skip_bigrams

NGRAM = ["bleu", "rouge1", "rouge2", "rougeL", "rougeSU4", "meteor", "nist", "chrf", "ter", "cider"]
REF = "the cat sat on the mat"
OTHER_REF = "a dog ran in the park"  # CIDEr-D needs a corpus of at least two references


def score(name, cands, refs, **options):
    return metrics.get(name, **options).score(cands, refs)


def one(name, cand, ref, **options):
    if name == "cider":  # add a second, unrelated pair so that document frequencies are defined
        return float(score(name, [cand, OTHER_REF], [ref, OTHER_REF], **options)[0])
    return float(score(name, [cand], [ref], **options)[0])


# --- hand-worked values ------------------------------------------------------------------


def test_bleu_by_hand_with_floor_smoothing():
    # 1-grams 4/5 (second "the" clipped), 2-grams 2/4, 3-grams 1/3, 4-grams 0/2 -> floor 0.1/2; BP = 1
    expected = (4 / 5 * 2 / 4 * 1 / 3 * 0.1 / 2) ** 0.25
    assert one("bleu", "the cat ate the fish", "the cat ate a fish") == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.285744043)
    # without smoothing a missing 4-gram match zeroes BLEU
    assert one("bleu", "the cat ate the fish", "the cat ate a fish", smooth_method="none") == 0.0


def test_bleu_equals_nltk_method1_on_whitespace_tokens():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    pairs = [("the quick brown fox jumps over it", "a quick brown fox jumped over it"),
             ("he is a nurse at the hospital", "she is a nurse at the hospital today")]
    ours = score("bleu", [c for c, _ in pairs], [r for _, r in pairs])
    theirs = [sentence_bleu([r.split()], c.split(), smoothing_function=SmoothingFunction().method1) for c, r in pairs]
    np.testing.assert_allclose(ours, theirs, atol=1e-9)


def test_rouge_variants_by_hand():
    # stemming maps "killed" to "kill": 3 of 4 unigrams without it, all 4 with it
    cand, ref = "police killed the gunman", "police kill the gunman"
    assert one("rouge1", cand, ref, use_stemmer=False) == pytest.approx(0.75)
    assert one("rouge1", cand, ref) == pytest.approx(1.0)
    # candidate 3 tokens, reference 6, 3 shared: P = 1, R = 0.5, F = 2/3
    assert one("rouge1", "the cat sat", REF, variant="P") == pytest.approx(1.0)
    assert one("rouge1", "the cat sat", REF, variant="R") == pytest.approx(0.5)
    assert one("rouge1", "the cat sat", REF) == pytest.approx(2 / 3)
    # bigrams: "the cat", "cat sat" of the reference's 5
    assert one("rouge2", "the cat sat", REF, variant="R") == pytest.approx(2 / 5)
    # LCS of "sat the cat" and the reference is 2 ("the cat" or "sat the")
    assert one("rougeL", "sat the cat", REF, variant="P") == pytest.approx(2 / 3)


def test_skip_bigrams_respect_the_gap_limit():
    units = skip_bigrams(list("abcdefg"), max_gap=4)
    pairs = [u for u in units if len(u) == 2]
    assert len(pairs) == 20  # all 21 ordered pairs of 7 tokens except (a, g), 5 tokens apart
    assert ("a", "f") in units and ("a", "g") not in units
    assert sum(1 for u in units if len(u) == 1) == 7
    assert len([u for u in skip_bigrams(list("abcdefg"), max_gap=0) if len(u) == 2]) == 6  # plain bigrams


def test_rouge_su4_by_hand():
    # 4 tokens each: 6 skip-bigrams + 4 unigrams = 10 units; shared: (police, the), (police, gunman),
    # (the, gunman) and the unigrams police, the, gunman = 6 -> P = R = F = 0.6
    assert one("rougeSU4", "police killed the gunman", "police kill the gunman", use_stemmer=False) == pytest.approx(0.6)
    assert one("rougeSU4", "police killed the gunman", "police kill the gunman") == pytest.approx(1.0)
    # reversed order keeps the unigrams (4) but no skip-bigram: 4 / 10
    assert one("rougeSU4", "gunman the kill police", "police kill the gunman") == pytest.approx(0.4)


def test_meteor_needs_wordnet_for_synonyms():
    # "ill" matches "sick" only through WordNet: 3 matches in 1 chunk -> 1 - 0.5 * (1/3)**3
    assert one("meteor", "he was ill", "he was sick") == pytest.approx(1 - 0.5 / 27)
    # no synonym: 2 of 3 matched, F_mean = 2/3, one chunk of 2 -> (1 - 0.5 / 8) * 2/3
    assert one("meteor", "he was red", "he was sick") == pytest.approx(0.625)
    assert one("meteor", "the auto is fast", "the car is fast") == pytest.approx(1 - 0.5 / 64)


def test_nist_by_hand_and_short_candidates():
    # information weights from the reference: unigrams log2(6 / count), "the cat"/"the mat" log2(2/1) = 1,
    # the other bigrams 0; identical candidate: (2 log2 3 + 4 log2 6) / 6 + 2 / 5
    expected = (2 * math.log2(3) + 4 * math.log2(6)) / 6 + 2 / 5
    assert one("nist", REF, REF) == pytest.approx(expected)
    # nltk divides by zero when the candidate is shorter than n; here missing orders contribute 0
    short, ref = "The happiest Christmas ever!", "The happiest religious person ever!"
    assert one("nist", short, ref, n=5) == pytest.approx(one("nist", short, ref, n=4))
    assert one("nist", "ever!", ref, n=5) == pytest.approx(one("nist", "ever!", ref, n=1))
    assert one("nist", short, ref) == pytest.approx(1.411678925)  # the released value for this row


def test_chrf_by_hand_and_against_the_sacrebleu_cli():
    # nltk: mean over orders of F_3. order 1: P = 1, R = 2/3; order 2: P = 1, R = 1/2
    f3 = lambda p, r: 10 * p * r / (9 * p + r)  # noqa: E731
    assert one("chrf", "ab", "abc", char_order=2) == pytest.approx((f3(1, 2 / 3) + f3(1, 1 / 2)) / 2)
    # `sacrebleu ref.txt -i hyp.txt -m chrf -b -w 6` on these two lines prints 48.699209
    cand, ref = "The cats sat on a mat!", "The cat sat on the mat."
    assert one("chrf", cand, ref, implementation="sacrebleu") == pytest.approx(0.48699209, abs=1e-8)
    # ... and with --chrf-beta 3: 48.395392
    assert one("chrf", cand, ref, implementation="sacrebleu", beta=3) == pytest.approx(0.48395392, abs=1e-8)


def test_ter_by_hand():
    # `sacrebleu ref.txt -i hyp.txt -m ter -b` prints 50.0: cats/cat, a/the, mat!/mat. over 6 words
    assert one("ter", "The cats sat on a mat!", "The cat sat on the mat.") == pytest.approx(0.5)
    assert one("ter", "sat the cat", "the cat sat") == pytest.approx(1 / 3)  # one block shift
    assert one("ter", "THE CAT SAT", "the cat sat") == 0.0
    assert one("ter", "THE CAT SAT", "the cat sat", case_sensitive=True) == pytest.approx(1.0)


def test_cider_d_by_hand():
    # two references -> idf of an n-gram in one of them (or in none) is ln 2 - ln 1 = ln 2
    # "x q" vs "x y": order 1 cosine 1/2 ("q" is weighted but unmatched), order 2 cosine 0,
    # orders 3-4 absent: 10 * (1/2) / 4
    assert cider_d([["x", "q"], ["z", "w"]], [["x", "y"], ["z", "w"]])[0] == pytest.approx(1.25)
    # "x" vs "x y": order 1 cosine 1/sqrt(2), Gaussian length penalty exp(-1 / (2 * 36))
    value = cider_d([["x"], ["z", "w"]], [["x", "y"], ["z", "w"]])[0]
    assert value == pytest.approx(10 * 2 ** -0.5 * math.exp(-1 / 72) / 4)


def test_cider_is_corpus_dependent_and_needs_two_references(tmp_path):
    m = metrics.get("cider")
    assert m.corpus_dependent
    with pytest.raises(MetricError, match="at least 2 distinct references"):
        m.score([REF, "the cat"], [REF, REF])
    small = m.score(["the cat sat on a mat", OTHER_REF], [REF, OTHER_REF])
    more = m.score(["the cat sat on a mat", OTHER_REF, "x"], [REF, OTHER_REF, "a cat ran away"])
    assert small[0] != pytest.approx(more[0])  # a third reference changes the document frequencies
    cache = ScoreCache(tmp_path / "s.sqlite")
    np.testing.assert_allclose(m.score(["the cat sat on a mat", OTHER_REF], [REF, OTHER_REF], cache=cache), small)
    np.testing.assert_allclose(m.score(["the cat sat on a mat", OTHER_REF, "x"],
                                       [REF, OTHER_REF, "a cat ran away"], cache=cache), more)
    assert cache.hits == 0  # the same pair in another corpus is another cache entry


# --- identical, disjoint and degenerate inputs -----------------------------------------


@pytest.mark.parametrize("name,best", [("bleu", 1.0), ("rouge1", 1.0), ("rouge2", 1.0), ("rougeL", 1.0),
                                       ("rougeSU4", 1.0), ("meteor", 1 - 0.5 / 6 ** 3), ("chrf", 1.0),
                                       ("ter", 0.0), ("cider", 10.0)])
def test_identical_texts_get_the_best_score(name, best):
    assert one(name, REF, REF) == pytest.approx(best)
    worse = one(name, "the dog sat on the mat", REF)
    assert (worse < best) if metrics.get(name).direction == "higher" else (worse > best)


@pytest.mark.parametrize("name,worst", [("bleu", 0.0), ("rouge1", 0.0), ("rouge2", 0.0), ("rougeL", 0.0), ("rougeSU4", 0.0),
                                        ("meteor", 0.0), ("nist", 0.0), ("chrf", 0.0), ("ter", 1.0),
                                        ("cider", 0.0)])
def test_disjoint_texts_get_the_worst_score(name, worst):
    assert one(name, "xx yy zz qq", "aa bb cc dd") == pytest.approx(worst, abs=1e-12)


def test_bleu_smoothing_floor_applies_to_orders_without_matches():
    # one unigram match, none above: p1 = 1/4, then 0.1 / (number of candidate n-grams) for orders 2-4
    expected = (1 / 4 * 0.1 / 3 * 0.1 / 2 * 0.1 / 1) ** 0.25
    assert one("bleu", "aa yy zz qq", "aa bb cc dd") == pytest.approx(expected)
    assert one("bleu", "aa yy zz qq", "aa bb cc dd", smooth_method="none") == 0.0


@pytest.mark.parametrize("name", NGRAM)
def test_empty_candidate_gets_the_worst_value_and_empty_reference_is_an_error(name):
    worst = 1.0 if name == "ter" else 0.0
    assert one(name, "", REF) == pytest.approx(worst)
    assert one(name, "   ", REF) == pytest.approx(worst)
    with pytest.raises(MetricError, match="reference 0 is empty"):
        score(name, [REF], ["  "])


@pytest.mark.parametrize("name", NGRAM)
def test_punctuation_only_and_very_long_candidates_are_defined(name):
    punct = one(name, "... !!! ?", REF)
    assert np.isfinite(punct)
    if name in ("rouge1", "rouge2", "rougeL", "rougeSU4", "cider"):
        assert punct == 0.0  # their tokenizers drop punctuation: nothing left to match
    long_text = " ".join([REF] * 400)  # 2,400 tokens
    start = time.perf_counter()
    value = one(name, long_text, REF)
    assert np.isfinite(value) and time.perf_counter() - start < 20
    if name == "ter":
        assert value > 1  # many more words than the reference: more edits than reference words


@pytest.mark.parametrize("name,released", [("bleu", (0.704805091, 0.704805091)), ("rouge1", (0.888888889, 0.888888889)),
                                           ("nist", (3.460156373, 3.460156373)), ("chrf", (0.811274775, 0.81007548))])
def test_defaults_reproduce_released_rows(name, released):
    # the first released gender pair (metric_fairness/gender.tsv rows 2-3), values printed to 9 decimals
    ref = "The developer argued with the designer because the developer did not like the design"
    cands = [ref.replace("because the developer", f"because {p}") for p in ("he", "she")]
    np.testing.assert_allclose(score(name, cands, [ref, ref]), released, atol=1e-9)


# --- options and signatures -------------------------------------------------------------


CHANGES = {"bleu": {"tokenize": "13a"}, "rouge1": {"variant": "R"}, "rouge2": {"use_stemmer": False},
           "rougeL": {"variant": "P"}, "rougeSU4": {"max_gap": 2}, "meteor": {"gamma": 0.4}, "nist": {"n": 5},
           "chrf": {"implementation": "sacrebleu"}, "ter": {"case_sensitive": True}, "cider": {"sigma": 3.0}}


@pytest.mark.parametrize("name", NGRAM)
def test_signature_changes_with_every_setting(name):
    base = metrics.get(name)
    changed = metrics.get(name, **CHANGES[name])
    assert base.signature != changed.signature
    assert base.signature.startswith(f"metric:{name}|") and "|direction:" in base.signature
    assert f"rev-{base.revision}" in base.signature
    assert metrics.get(name).signature == base.signature  # deterministic


def test_bad_options_are_clear_errors():
    with pytest.raises(MetricError, match="n=0 must be an integer of at least 1"):
        metrics.get("nist", n=0)
    with pytest.raises(MetricError, match="tokenize='moses' is not one of"):
        metrics.get("bleu", tokenize="moses")
    with pytest.raises(MetricError, match="max_gap=-1"):
        metrics.get("rougeSU4", max_gap=-1)
    assert "beta:2" in metrics.get("chrf", implementation="sacrebleu").signature  # the resolved default


# --- WordNet set-up -----------------------------------------------------------------------


def test_wordnet_copy_has_the_lexnames_table():
    assert wordnet.is_installed(), "run `make wordnet`"
    lines = (wordnet.wordnet_dir() / "lexnames").read_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[18] == "18\tnoun.person\t1" and lines[44] == "44\tadj.ppl\t3"
    assert not any(p.is_symlink() for p in wordnet.wordnet_dir().iterdir())
    assert wordnet.reader().synsets("dog")[0].lexname() == "noun.animal"  # read through lexnames


def test_the_parsed_wordnet_reader_is_kept_and_a_corrupt_one_made_again(tmp_path):
    """The reader's parsed index is kept beside the copy: the next process loads it instead of parsing the files,
    with the same synsets and METEOR scores; a kept file that cannot be read is made again."""
    made = wordnet.reader()
    kept = wordnet._kept_reader()
    assert kept.parent == wordnet.wordnet_dir() and kept.is_file()  # kept by the first process that made it
    copy = tmp_path / kept.name
    wordnet._keep(made, copy)
    loaded = wordnet._load_kept(copy)
    assert loaded is not made and loaded._data_file_map == {}  # its data files are reopened on use
    assert [s.name() for s in loaded.synsets("ill")] == [s.name() for s in made.synsets("ill")]
    assert loaded.synsets("dog")[0].lexname() == "noun.animal"
    copy.write_bytes(b"not a pickle")
    assert wordnet._load_kept(copy) is None and wordnet._load_kept(tmp_path / "none") is None  # made again


def test_lexnames_from_the_man_page_table():
    letters = [f"v{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(41)]
    names = ["adj.all", "adj.pert", "adv.all", "noun.Tops", *[f"verb.{x}" for x in letters]]
    rows = "\n".join(f"{i:02d}\t{name}  \tdescription {i}" for i, name in enumerate(names))
    text = wordnet.lexnames_from_man(".TS\ncenter ;\nl l l.\n_\n" + rows + "\n.TE\n").splitlines()
    assert text[:4] == ["00\tadj.all\t3", "01\tadj.pert\t3", "02\tadv.all\t4", "03\tnoun.Tops\t1"]
    assert text[44] == "44\tverb.vbo\t2"
    with pytest.raises(wordnet.WordNetError, match="expected file numbers 00-44"):
        wordnet.lexnames_from_man("00\tadj.all\tall adjective clusters\n")


def test_meteor_without_wordnet_says_how_to_set_it_up(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_NLTK_DATA", str(tmp_path))
    wordnet.reader.cache_clear()
    try:
        m = metrics.get("meteor")
        assert "wordnet:missing" in m.signature
        with pytest.raises(MetricError, match="make wordnet"):
            m.score(["a b"], ["a c"])
    finally:
        monkeypatch.undo()
        wordnet.reader.cache_clear()
