"""Static-embedding metrics: hand-worked values on tiny 2-d vectors, the real word2vec subset, OOV policy."""

import math
import time

import numpy as np
import pytest

from metricbias import metrics
from metricbias.metrics.base import MetricError
from metricbias.metrics.embedding import OOVWarning, extrema, load_vectors

EMBEDDING = ["wmd", "embedding_average", "vector_extrema", "greedy_matching"]
SQ2 = math.sqrt(2)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A word2vec binary with 2-d vectors: up (1,0), down (-1,0), left (0,1), Paris (0,1) (capitalized only)."""
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=2)
    kv.add_vectors(["up", "down", "left", "Paris"], np.array([[1, 0], [-1, 0], [0, 1], [0, 1]], dtype=np.float32))
    path = tmp_path_factory.mktemp("vectors") / "toy.bin"
    kv.save_word2vec_format(str(path), binary=True)
    return str(path)


def one(name, cand, ref, backbone, **options):
    return float(metrics.get(name, backbone=backbone, **options).score([cand], [ref])[0])


# --- hand-worked values on the toy vectors --------------------------------------------------


def test_embedding_average_by_hand(toy):
    assert one("embedding_average", "up", "down", toy) == pytest.approx(-1.0)  # opposite: the minimum
    assert one("embedding_average", "up left", "up", toy) == pytest.approx(1 / SQ2)  # mean (.5, .5) vs (1, 0)
    assert one("embedding_average", "up, left!", "left up", toy) == pytest.approx(1.0)  # order and punctuation


def test_vector_extrema_by_hand(toy):
    np.testing.assert_array_equal(extrema(np.array([[1.0, -3.0], [-2.0, 1.0]])), [-2.0, -3.0])
    # "up left" -> (1, 1); "down left" -> (-1, 1): per dimension the value of largest magnitude
    assert one("vector_extrema", "up left", "down", toy) == pytest.approx(-1 / SQ2)
    assert one("vector_extrema", "down left", "up left", toy) == pytest.approx(0.0)
    assert one("vector_extrema", "up", "down", toy) == pytest.approx(-1.0)


def test_greedy_matching_by_hand(toy):
    # ref "up" -> best candidate match 1; candidate up -> 1, left -> 0: (1 + 0.5) / 2
    assert one("greedy_matching", "up left", "up", toy) == pytest.approx(0.75)
    assert one("greedy_matching", "up", "down", toy) == pytest.approx(-1.0)


def test_wmd_by_hand(toy):
    assert one("wmd", "up", "down", toy, output="distance") == pytest.approx(2.0)
    assert one("wmd", "up", "down", toy) == pytest.approx(1 / 3)  # 1 / (1 + 2)
    # half the mass stays (up -> up), half moves left -> down at cost sqrt(2)
    assert one("wmd", "up left", "up down", toy, output="distance") == pytest.approx(SQ2 / 2)
    # repeated words weigh more: {up: 2/3, left: 1/3} vs {up: 1/2, left: 1/2}: 1/6 moves at sqrt(2)
    assert one("wmd", "up up left", "up left", toy, output="distance") == pytest.approx(SQ2 / 6)


@pytest.mark.parametrize("name", EMBEDDING)
def test_identical_bags_score_the_maximum(name, toy):
    assert one(name, "up left down", "up left down", toy) == pytest.approx(1.0)
    if name == "wmd":
        assert one(name, "up left down", "down left up", toy, output="distance") == pytest.approx(0.0, abs=1e-12)


def test_case_policy(toy):
    m = {case: metrics.get("wmd", backbone=toy, case=case) for case in ("fallback", "lower", "exact")}
    assert m["fallback"].tokens("Paris UP paris") == ["Paris", "up"]  # as written, else lowercased
    assert m["lower"].tokens("Paris UP paris") == ["up"]  # "paris" has no vector
    assert m["exact"].tokens("Paris UP paris") == ["Paris"]


# --- OOV and degenerate inputs ----------------------------------------------------------


@pytest.mark.parametrize("name", EMBEDDING)
@pytest.mark.parametrize("cand", ["", "   ", "... !!!", "zebra quokka"])
def test_texts_without_vectors_score_zero_with_a_warning(name, cand, toy):
    m = metrics.get(name, backbone=toy)
    with pytest.warns(OOVWarning, match="1 of 2 pairs have a text with no in-vocabulary token"):
        out = m.score([cand, "up"], ["up left", "up left"])
    assert out[0] == 0.0 and out[1] > 0
    with pytest.raises(MetricError, match="reference 0 is empty"):
        m.score(["up"], [""])


def test_wmd_distance_without_vectors_is_infinite(toy):
    with pytest.warns(OOVWarning, match="scored inf"):
        assert math.isinf(one("wmd", "zebra", "up", toy, output="distance"))


@pytest.mark.parametrize("name", EMBEDDING)
def test_very_long_text_is_quick(name, toy):
    start = time.perf_counter()
    value = one(name, " ".join(["up left down"] * 2000), "up left", toy)
    assert np.isfinite(value) and time.perf_counter() - start < 10


# --- the real word2vec subset -----------------------------------------------------------


def test_word2vec_subset_loads_once_and_wmd_matches_gensim():
    m = metrics.get("wmd", output="distance")
    kv = load_vectors(str(m._path))
    assert len(kv.index_to_key) == 26423 and kv.vector_size == 300
    assert load_vectors(str(m._path)) is kv  # cached per process
    assert "a" not in kv.key_to_index and "nurse" in kv.key_to_index  # stop words absent: always OOV
    pairs = [("The developer argued with the designer because she did not like the design",
              "The developer argued with the designer because the developer did not like the design"),
             ("the nurse helped the patient", "the doctor treated the sick man")]
    ours = m.score([c for c, _ in pairs], [r for _, r in pairs])
    theirs = [kv.wmdistance(m.tokens(c), m.tokens(r)) for c, r in pairs]
    np.testing.assert_allclose(ours, theirs, atol=1e-9)


@pytest.mark.parametrize("name", EMBEDDING)
def test_real_vectors_rank_a_paraphrase_above_an_unrelated_text(name):
    m = metrics.get(name)
    ref = "the doctor treated the sick patient"
    out = m.score([ref, "the physician treated the ill patient", "stock prices fell sharply yesterday"], [ref] * 3)
    assert out[0] == pytest.approx(1.0)
    assert out[0] > out[1] > out[2]


# --- signatures and errors ----------------------------------------------------------------


@pytest.mark.parametrize("name", EMBEDDING)
def test_signature_records_backbone_case_oov_and_direction(name, toy):
    base = metrics.get(name)
    sig = base.signature
    assert "backbone:word2vec-googlenews-bolukbasi" in sig and "|backbone_sha:" in sig
    assert "|oov:drop|" in sig and "|direction:higher|" in sig and "case:fallback" in sig
    assert metrics.get(name, case="lower").signature != sig
    assert metrics.get(name, stopwords="gensim").signature != sig
    toy_sig = metrics.get(name, backbone=toy).signature
    assert toy_sig.split("|backbone_sha:")[1][:12] != sig.split("|backbone_sha:")[1][:12]
    if name == "wmd":
        assert "|direction:lower|" in metrics.get(name, output="distance").signature


def test_stopwords_option_drops_gensim_stop_words():
    m = metrics.get("embedding_average", stopwords="gensim")
    assert m.tokens("she said the nurse was tired") == ["said", "nurse", "tired"]
    assert metrics.get("embedding_average").tokens("she said the nurse") == ["she", "said", "the", "nurse"]


def test_backbone_errors_are_clear(tmp_path):
    with pytest.raises(MetricError, match="unknown backbone 'glove-42'.*Available here"):
        metrics.get("wmd", backbone="glove-42")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with pytest.raises(MetricError, match="is a model folder, not a file of static word vectors"):
        metrics.get("greedy_matching", backbone=str(folder))
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not vectors")
    with pytest.raises(MetricError, match="cannot read word2vec vectors"):
        metrics.get("wmd", backbone=str(junk)).score(["a"], ["b"])
