"""BERTScore and MoverScore on a tiny BERT with MiniLM's tokenizer."""

import numpy as np
import pytest

from metricbias import backbones, metrics, models
from metricbias.cache import ScoreCache
from metricbias.metrics.base import MetricError

CANDS = ["The nurse helped the doctor because she was kind.",
         "The nurse helped the doctor because he was kind.",
         "A man is playing a guitar.",
         "The cat sat on the mat!"]
REFS = ["The nurse helped the doctor because the nurse was kind.",
        "The nurse helped the doctor because the nurse was kind.",
        "A woman is singing a song.",
        "The dog slept by the door."]


def bertscore(tiny_bert, **kw):
    return metrics.get("bertscore", backbone=str(tiny_bert), device="cpu", **kw)


@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_equals_bert_score_package(tiny_bert, idf):
    import bert_score

    m = bertscore(tiny_bert, layer=2, idf=idf)
    ours = m.prf(CANDS, REFS)
    # one pair per batch: bert-score pads nothing, so its greedy match is the one we compute for every batch
    P, R, F = bert_score.score(CANDS, REFS, model_type=str(tiny_bert), num_layers=2, idf=idf, device="cpu",
                               nthreads=0, batch_size=1)
    np.testing.assert_allclose(ours, np.stack([P, R, F], 1), atol=1e-5)
    assert m.corpus_dependent is idf


def test_a_pairs_bertscore_does_not_depend_on_the_pairs_beside_it(tiny_bert):
    """bert-score zeroes padded similarities, so a token whose similarities are all negative took 0 from the padding
    and the score changed with the batch; ours scores each pair as alone."""
    m = bertscore(tiny_bert, layer=2)
    together = m.prf(CANDS, REFS)
    alone = np.concatenate([m.prf([c], [r]) for c, r in zip(CANDS, REFS)])
    np.testing.assert_allclose(together, alone, atol=1e-6)


def test_bertscore_identical_text_scores_one_and_variants_differ(tiny_bert):
    same = bertscore(tiny_bert).score(["The nurse was kind."], ["The nurse was kind."])
    assert same[0] == pytest.approx(1.0, abs=1e-5)
    p, r, f = (bertscore(tiny_bert, variant=v).score(CANDS, REFS) for v in "PRF")
    np.testing.assert_allclose(f, 2 * p * r / (p + r), rtol=1e-5)
    assert not np.allclose(p, r)


def test_default_layers_are_explicit(tiny_bert):
    assert bertscore(tiny_bert).options["layer"] == 2  # unknown backbone: its last layer
    assert "layer:2" in bertscore(tiny_bert).signature
    from metricbias.metrics.matching import DEFAULT_LAYERS, default_bertscore_layer

    assert default_bertscore_layer("all-MiniLM-L6-v2", backbones.resolve("all-MiniLM-L6-v2")) == \
        DEFAULT_LAYERS["all-MiniLM-L6-v2"]
    assert default_bertscore_layer("bert-base-uncased", tiny_bert) == 9  # bert-score's tuned table
    with pytest.raises(MetricError, match="layers 0..2; layer=7"):
        bertscore(tiny_bert, layer=7)


def test_signatures_change_with_every_setting(tiny_bert, tmp_path):
    base = bertscore(tiny_bert)
    variants = [bertscore(tiny_bert, variant="P"), bertscore(tiny_bert, layer=1), bertscore(tiny_bert, idf=True),
                metrics.get("moverscore", backbone=str(tiny_bert), device="cpu")]
    sigs = {base.signature} | {m.signature for m in variants}
    assert len(sigs) == 5
    same = metrics.get("bertscore", backbone=str(tiny_bert), device="auto", batch_size=3)
    assert same.signature == base.signature  # runtime options are not in the signature
    for field in ("metric:bertscore", "variant:F", "layer:2", "idf:False", "weights:", "adapter:-",
                  "bert-score-0.3.13"):
        assert field in base.signature
    # a changed weight file changes the fingerprint
    import shutil

    copy = shutil.copytree(tiny_bert, tmp_path / "copy")
    assert bertscore(copy).signature.split("weights:")[1] == base.signature.split("weights:")[1]
    from tiny_models import save_tiny_bert

    save_tiny_bert(copy, seed=1)
    assert bertscore(copy).signature.split("weights:")[1] != base.signature.split("weights:")[1]


def test_moverscore_identical_is_one_and_matches_a_per_pair_emd(tiny_bert):
    import ot
    import torch
    from bert_score.utils import get_idf_dict

    m = metrics.get("moverscore", backbone=str(tiny_bert), device="cpu")
    assert m.score(["The nurse was kind."], ["The nurse was kind."])[0] == pytest.approx(1.0, abs=1e-9)
    ours = m.score(CANDS, REFS)
    # oracle: the authors' recipe written out pair by pair, on the same encoder
    enc = models.load_encoder(str(tiny_bert), "cpu")
    tok = enc.tokenizer
    idf_r, idf_c = get_idf_dict(REFS, tok, nthreads=0), get_idf_dict(CANDS, tok, nthreads=0)

    def bag(text, idf):
        ids = tok.encode(text)
        with torch.no_grad():
            h = enc.model(torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0].double().numpy()
        toks = tok.convert_ids_to_tokens(ids)
        keep = [i for i, t in enumerate(toks) if t not in set(".,!?") and not t.startswith("##")]
        w = np.array([idf[ids[i]] for i in keep])
        v = h[keep] / np.linalg.norm(h[keep], axis=1, keepdims=True)
        return v, w / w.sum()

    for i, (c, r) in enumerate(zip(CANDS, REFS)):
        (vc, wc), (vr, wr) = bag(c, idf_c), bag(r, idf_r)
        dist = np.sqrt(((vr[:, None] - vc[None]) ** 2).sum(-1))
        assert ours[i] == pytest.approx(1 / (1 + ot.emd2(wr, wc, dist)), abs=1e-6)
    assert m.corpus_dependent


def test_moverscore_bigrams_and_uniform_weights(tiny_bert):
    one = metrics.get("moverscore", backbone=str(tiny_bert), device="cpu").score(CANDS, REFS)
    two = metrics.get("moverscore", backbone=str(tiny_bert), device="cpu", n_gram=2).score(CANDS, REFS)
    flat = metrics.get("moverscore", backbone=str(tiny_bert), device="cpu", idf=False)
    assert not np.allclose(one, two)
    assert np.all((two <= 1) & (two > -1))
    assert not flat.corpus_dependent
    assert flat.score(["same words here"], ["same words here"])[0] == pytest.approx(1.0)


def test_degenerate_inputs(tiny_bert):
    for name in ("bertscore", "moverscore"):
        m = metrics.get(name, backbone=str(tiny_bert), device="cpu")
        with pytest.raises(MetricError, match="candidate 0 is empty"):
            m.score([" "], ["a reference"])
        punct = m.score(["?!...", "a b"], ["A reference sentence.", "a b"])
        assert np.isfinite(punct).all()
        long = m.score(["word " * 2000], ["word " * 3])  # truncated to the model's 512 positions
        assert np.isfinite(long).all()
    # a one-sentence corpus gives every idf weight log(2/2) = 0: MoverScore falls back to uniform weights
    assert np.isfinite(metrics.get("moverscore", backbone=str(tiny_bert), device="cpu").score(["x y"], ["y z"])).all()


def test_cache_reuses_and_invalidates(tiny_bert, tmp_path):
    cache = ScoreCache(tmp_path / "s.sqlite")
    m = bertscore(tiny_bert)
    first = m.score(CANDS, REFS, cache=cache)
    assert cache.misses == 4
    again = bertscore(tiny_bert).score(CANDS, REFS, cache=cache)
    assert cache.hits == 4 and np.array_equal(first, again)
    bertscore(tiny_bert, layer=1).score(CANDS, REFS, cache=cache)
    assert cache.misses == 8
    idf = bertscore(tiny_bert, idf=True)  # corpus-dependent: a different corpus is a different key
    idf.score(CANDS, REFS, cache=cache)
    idf.score(CANDS[:2], REFS[:2], cache=cache)
    assert cache.misses == 14


def test_encoder_embeds_each_sentence_once(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path))  # an empty disk cache
    models.clear()
    m = bertscore(tiny_bert)
    m.score(CANDS, REFS)
    enc = models.load_encoder(str(tiny_bert), "cpu")
    assert enc.computed == len(set(CANDS + REFS))  # the shared reference was encoded once
    metrics.get("moverscore", backbone=str(tiny_bert), device="cpu").score(CANDS, REFS)  # same layer: no new pass
    assert enc.computed == len(set(CANDS + REFS))


def test_embeddings_on_disk_give_bit_identical_scores(tiny_bert, tmp_path, monkeypatch):
    """In memory only, computed and stored, read back by a fresh encoder: the same scores to the bit."""
    configs = [("bertscore", {}), ("bertscore", {"idf": True, "layer": 1}), ("moverscore", {}),
               ("moverscore", {"n_gram": 2})]

    def scores():
        return [metrics.get(n, backbone=str(tiny_bert), device="cpu", **o).score(CANDS, REFS) for n, o in configs]

    monkeypatch.setattr(models, "PERSIST_EMBEDDINGS", False)
    models.clear()
    memory = scores()
    monkeypatch.setattr(models, "PERSIST_EMBEDDINGS", True)
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path))
    models.clear()
    computed = scores()
    assert models.load_encoder(str(tiny_bert), "cpu").computed == 2 * len(set(CANDS + REFS))  # layers 2 and 1
    assert list((tmp_path / "embeddings").glob("*.sqlite"))
    models.clear()
    loaded = scores()
    enc = models.load_encoder(str(tiny_bert), "cpu")
    assert enc.computed == 0 and enc.loaded == 2 * len(set(CANDS + REFS))  # layers 2 and 1, all from disk
    for a, b, c in zip(memory, computed, loaded):
        assert a.tobytes() == b.tobytes() == c.tobytes()


def test_fast_token_ids_equal_bert_scores_on_ascii_and_the_rest_goes_the_slow_way(tiny_bert):
    from bert_score.utils import sent_encode

    enc = models.load_encoder(str(tiny_bert), "cpu")
    assert enc.fast_tokenizer is not None
    texts = CANDS + REFS + ["  padded  ", "x" * 3000, "word " * 600, "Café naïve — “quotes”", "tab\tand\nnewline", " "]
    enc.clear()
    assert enc.encode_many(texts) == [list(sent_encode(enc.tokenizer, t)) for t in texts]


def test_matching_maps(tiny_bert):
    bs = bertscore(tiny_bert).matching_map(CANDS[0], REFS[0])
    assert bs.matrix.shape == (len(bs.candidate_tokens), len(bs.reference_tokens))
    assert "she" in bs.candidate_tokens and "[CLS]" not in bs.candidate_tokens
    assert np.all(bs.matrix <= 1 + 1e-6)
    ms = metrics.get("moverscore", backbone=str(tiny_bert), device="cpu").matching_map(CANDS[0], REFS[0])
    assert ms.matrix.shape == (len(ms.candidate_tokens), len(ms.reference_tokens))
    assert ms.matrix.sum() == pytest.approx(1.0)  # all the mass is moved
    assert "." not in ms.candidate_tokens


def test_adapter_changes_scores_and_signature(tiny_bert, tmp_path):
    import adapters
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(str(tiny_bert))
    adapters.init(model)
    model.add_adapter("debias", config="seq_bn")
    torch.manual_seed(0)
    with torch.no_grad():  # a freshly added bottleneck adapter is near-identity: perturb it
        for name, p in model.named_parameters():
            if "adapters" in name:
                p.add_(torch.randn_like(p) * 0.5)
    model.save_adapter(str(tmp_path / "adapter"), "debias")
    plain = bertscore(tiny_bert)
    adapted = bertscore(tiny_bert, adapter=str(tmp_path / "adapter"))
    assert "adapter:-" in plain.signature and "adapter:-" not in adapted.signature
    assert not np.allclose(plain.score(CANDS, REFS), adapted.score(CANDS, REFS))
    with pytest.raises(models.ModelError, match="is neither a folder nor a trained adapter"):
        bertscore(tiny_bert, adapter=str(tmp_path / "nowhere"))


def test_unavailable_and_wrong_backbones_are_clear_errors(tiny_bart):
    with pytest.raises(backbones.BackboneError, match="not available on this machine.*Available here: .*all-MiniLM"):
        metrics.get("bertscore", backbone="roberta-large")
    with pytest.raises(backbones.BackboneError, match="unknown backbone 'bert-tiny-nowhere'"):
        metrics.get("bertscore", backbone="bert-tiny-nowhere")
    with pytest.raises(MetricError, match="is a seq2seq backbone; bertscore takes encoder backbones"):
        metrics.get("bertscore", backbone=str(tiny_bart))


def test_fast_token_ids_equal_bert_scores_on_every_released_text():
    """MiniLM's fast tokenizer gives bert-score's ids on all 2,888 distinct texts of the six released files."""
    from bert_score.utils import sent_encode

    from metricbias.datasets import published

    data = published.load()
    texts = list(dict.fromkeys(data[["candidate_1", "candidate_2", "reference_1", "reference_2"]].to_numpy().ravel()))
    enc = models.load_encoder("all-MiniLM-L6-v2", "cpu")
    assert enc.fast_tokenizer is not None
    enc.clear()
    assert enc.encode_many(texts) == [list(sent_encode(enc.tokenizer, t)) for t in texts]
