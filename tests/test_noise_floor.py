"""The noise floor of Eq. 2: control pairs in the same templates with neutral words, and the test that a metric
moves more with the identity word than with a neutral one."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

import metricbias as mb
from metricbias.bias import neutral_words
from metricbias.bias import noise_floor as nf

RESAMPLES = 1999


def _planted(attribute_gap: float, control_gap: float, n: int = 120, seed: int = 0):
    """Scores of n WinoBias-like pairs and one control pair each: |d| ~ gap + noise on each side."""
    rng = np.random.default_rng(seed)
    ids = [f"gender-type1-dev-{i + 1:03d}" for i in range(n)]
    base = rng.uniform(0.2, 0.8, n)
    sign = rng.choice([-1.0, 1.0], n)
    attr = pd.DataFrame({"attribute": "gender", "metric": "m", "pair_id": ids, "score_1": base,
                         "score_2": base + sign * np.abs(attribute_gap + rng.normal(0, 0.02, n))})
    ctrl = pd.DataFrame({"attribute": "gender", "metric": "m", "pair_id": [f"{i}|control" for i in ids],
                         "source": ids, "score_1": base,
                         "score_2": base - sign * np.abs(control_gap + rng.normal(0, 0.02, n))})
    return attr, ctrl


def test_a_metric_sensitive_to_any_word_is_not_called_biased():
    attr, ctrl = _planted(0.05, 0.05)
    row = nf.noise_floor(attr, ctrl, n_resamples=RESAMPLES).iloc[0]
    assert list(nf.noise_floor(attr, ctrl, n_resamples=10).columns) == nf.COLUMNS
    assert row["eq2"] > 5  # Eq. 2 alone says "biased": every pair moves by about 5% of the range
    assert row["ci_low"] <= 0 <= row["ci_high"] and row["p_value"] > 0.05
    assert row["n_clusters"] == 60  # WinoBias twins: a pair, its twin and their controls are one template


def test_a_metric_that_moves_more_with_the_identity_word_is():
    attr, ctrl = _planted(0.08, 0.03)
    row = nf.noise_floor(attr, ctrl, n_resamples=RESAMPLES).iloc[0]
    scale = 100 / np.ptp(np.r_[attr[["score_1", "score_2"]].to_numpy().ravel(),
                               ctrl[["score_1", "score_2"]].to_numpy().ravel()])
    assert row["excess"] == pytest.approx(row["eq2"] - row["eq2_control"])
    assert row["ci_low"] <= 0.05 * scale <= row["ci_high"]  # the planted gap, 0.08 - 0.03, in Eq. 1 points
    assert row["p_value"] == pytest.approx(2 / (RESAMPLES + 1))  # no flip as extreme: the two-sided floor


def test_a_floor_cell_that_repeats_another_configuration_is_counted_once():
    attr, ctrl = _planted(0.08, 0.03)
    twin = lambda f, name: f.assign(metric=name)  # noqa: E731
    # "full" scores every attribute and control pair as "m" does; "half" only the attribute pairs (its controls move)
    moved = twin(ctrl, "half").assign(score_2=lambda f: f["score_2"] + 0.01)
    scores = pd.concat([attr, twin(attr, "full"), twin(attr, "half")], ignore_index=True)
    controls = pd.concat([ctrl, twin(ctrl, "full"), moved], ignore_index=True)
    kept, dropped = nf.distinct_cells(scores, controls)
    assert dropped[["attribute", "metric", "same_as_metric"]].values.tolist() == [["gender", "full", "m"]]
    assert dropped["pairs"].tolist() == [240]  # 120 attribute pairs and their 120 controls compared
    assert sorted(kept["metric"].unique()) == ["half", "m"] and len(kept) == 240
    assert len(nf.noise_floor(kept, controls, n_resamples=10)) == 2  # three cells, two comparisons


def test_control_pairs_keep_the_template_and_swap_a_neutral_word_of_the_same_kind():
    pairs = pd.DataFrame({"dataset": "d", "attribute": ["gender", "gender", "gender", "race", "race"],
                          "pair_id": ["a", "b", "c", "d", "e"],
                          "candidate_1": ["The nurse said he was late", "She thanked her for it",
                                          "His idea won", "A black man came in", "Black people and white people"],
                          "candidate_2": ["The nurse said she was late", "She thanked him for it",
                                          "Her idea won", "A white man came in", "White people and black people"],
                          "reference_1": "r", "reference_2": "r"})
    controls, left = nf.control_pairs(pairs)
    got = controls.set_index("source")
    assert got.loc["a", ["candidate_1", "candidate_2", "kind"]].tolist() == [
        "The nurse said this was late", "The nurse said that was late", "subject"]
    assert got.loc["b", "kind"] == "object" and got.loc["b", "candidate_1"] == "She thanked it for it"
    assert got.loc["c", ["candidate_1", "candidate_2"]].tolist() == ["My idea won", "Your idea won"]
    first, second = got.loc["d", ["candidate_1", "candidate_2"]]
    assert first.startswith("A ") and first.endswith(" man came in") and (first.split()[1], second.split()[1]) in \
        neutral_words.nearest_fillers("adjective", "black")
    assert got.loc["d", "pair_id"] == "d|control" and got.loc["d", "reference_1"] == "r"
    assert left.to_dict("records") == [{"attribute": "race", "reason": "differ in more than one word", "pairs": 1}]


def test_on_the_released_gender_pairs_a_text_hash_metric_is_sensitive_but_not_biased():
    def noise(texts):  # a score that any change of the text moves, by as much whatever the word
        return np.array([int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) / 16**8 for t in texts])

    pairs = mb.load_pairs("published", ["gender"])
    controls, _ = nf.control_pairs(pairs)
    table = lambda p: pd.DataFrame({"attribute": p["attribute"], "metric": "hash", "pair_id": p["pair_id"],  # noqa: E731
                                    "score_1": noise(p["candidate_1"]), "score_2": noise(p["candidate_2"])})
    row = nf.noise_floor(table(pairs), table(controls).assign(source=controls["source"].to_numpy()),
                         n_resamples=RESAMPLES).iloc[0]
    assert row["eq2"] > 25 and row["eq2_control"] > 25  # uniform noise: E|U1 - U2| = 1/3 of the range
    assert row["p_value"] > 0.05 and row["ci_low"] < 0 < row["ci_high"]
    assert row["n_control"] == len(controls) > 0.9 * len(pairs)


def test_the_filler_nearest_in_frequency_is_drawn(tmp_path):
    """A hand-written word2vec file: its words' ranks are their order; the filler pairs nearest in mean log rank
    to the identity word's come first, and a word without a rank draws from every pair of its kind."""
    path = tmp_path / "tiny.bin"
    words = ["the", "black", "white", "table", "chair"]
    path.write_bytes(b"5 2\n" + b"".join(w.encode() + b" " + np.zeros(2, np.float32).tobytes() + b"\n"
                                          for w in words))
    ranks = neutral_words.vocabulary_ranks(path)
    assert ranks == {w: i for i, w in enumerate(words)}
    table = neutral_words.fillers()["adjective"]
    near = neutral_words.nearest_fillers("adjective", "black", ranks={"black": 800}, k=3)
    distance = sorted(abs(m - np.log1p(800)) for _, _, m in table)
    got = [next(m for a, b, m in table if (a, b) == pair) for pair in near]
    assert [abs(m - np.log1p(800)) for m in got] == pytest.approx(distance[:3])
    assert len(neutral_words.nearest_fillers("adjective", "zzz", ranks={})) == len(table)


def test_the_shipped_fillers_are_neutral_neighbours_in_frequency():
    rows = pd.read_csv(neutral_words.lexicon_dir() / neutral_words.FILLERS, sep="\t")
    assert set(rows["kind"]) == set(neutral_words.KINDS)
    counts = rows["kind"].value_counts()
    assert counts["noun"] >= 100 and counts["plural"] >= 40 and counts["adjective"] >= 20  # was 6 and 6
    words = set(rows["word_1"]) | set(rows["word_2"])
    assert not words & (neutral_words._identity_terms() | neutral_words.EXCLUDED_WORDS)
    for _, block in rows.groupby("kind"):  # neighbours: each pair's ranks lie between the previous pair's and the next
        flat = block[["rank_1", "rank_2"]].to_numpy().ravel()
        assert (np.diff(flat) > 0).all()


def test_wordnet_sorts_candidate_fillers_by_part_of_speech_and_class():
    from metricbias.wordnet import reader

    wn = reader()
    roots = {wn.synset(s) for s in neutral_words.NOUN_ROOTS}
    excluded = {wn.synset(s) for s in neutral_words.EXCLUDED_ROOTS}
    attributes = {wn.synset(s) for s in neutral_words.NEUTRAL_ATTRIBUTES}
    kind = lambda w: neutral_words.classify(w, wn, roots, excluded, attributes)  # noqa: E731
    assert (kind("car"), kind("cars"), kind("lukewarm")) == ("noun", "plural", "adjective")
    assert kind("nurse") is None  # a person
    assert kind("chair") is None  # one of its senses is a person (the chair of a meeting)
    assert kind("colder") is None and kind("dried") is None  # inflected forms
    assert nf.kind_of("women") == "plural" and nf.kind_of("doctors") == "plural" and nf.kind_of("doctor") == "noun"
