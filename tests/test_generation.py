"""BARTScore, PRISM-style scoring and FrugalScore on tiny models with real tokenizers."""

import numpy as np
import pytest

from metricbias import metrics, models
from metricbias.metrics.base import MetricError

CANDS = ["The nurse helped the doctor because she was kind.", "The cat sat on the mat."]
REFS = ["The nurse helped the doctor because the nurse was kind.", "The dog slept by the door."]


def manual_log_p(folder, source, target, prefix_ids=()):
    """log p(target | source) averaged over target tokens, written out with an explicit decoder input."""
    import torch

    tok, model = models.load_seq2seq(str(folder), "cpu")
    src = tok(source, return_tensors="pt")["input_ids"]
    tgt = list(prefix_ids) + tok(target)["input_ids"]
    decoder_in = torch.tensor([[model.config.decoder_start_token_id] + tgt[:-1]])
    with torch.no_grad():
        logits = model(input_ids=src, decoder_input_ids=decoder_in).logits[0]
    logp = torch.log_softmax(logits, -1)[torch.arange(len(tgt)), torch.tensor(tgt)].double()
    return float(logp[len(prefix_ids):].mean())


def test_bartscore_directions(tiny_bart):
    get = lambda v: metrics.get("bartscore", backbone=str(tiny_bart), variant=v, device="cpu")  # noqa: E731
    p, r, f = get("P").score(CANDS, REFS), get("R").score(CANDS, REFS), get("F").score(CANDS, REFS)
    for i in range(2):  # precision = log p(sys | ref), recall = log p(ref | sys)
        assert p[i] == pytest.approx(manual_log_p(tiny_bart, REFS[i], CANDS[i]), abs=1e-5)
        assert r[i] == pytest.approx(manual_log_p(tiny_bart, CANDS[i], REFS[i]), abs=1e-5)
    np.testing.assert_allclose(f, (p + r) / 2)
    np.testing.assert_allclose(get("P").score(REFS, CANDS), r)  # swapping the texts swaps the directions
    assert np.all(p < 0) and not np.allclose(p, r)
    assert get("P").signature != get("R").signature


def test_bartscore_batching_does_not_change_scores(tiny_bart):
    texts = CANDS + ["A man is playing a guitar.", "The developer argued with the designer."]
    refs = REFS + ["A woman is singing.", "The designer did not like the design at all."]
    one = metrics.get("bartscore", backbone=str(tiny_bart), device="cpu", batch_size=1).score(texts, refs)
    many = metrics.get("bartscore", backbone=str(tiny_bart), device="cpu", batch_size=4).score(texts, refs)
    np.testing.assert_allclose(one, many, atol=1e-5)


def test_prism_forces_the_language_tag_and_does_not_score_it(tiny_bart):
    m = metrics.get("prism", backbone=str(tiny_bart), variant="P", target_prefix="<en>", device="cpu")
    tok, _ = models.load_seq2seq(str(tiny_bart), "cpu")
    tag = tok("<en>", add_special_tokens=False)["input_ids"]
    assert len(tag) == 1
    got = m.score(CANDS, REFS)
    for i in range(2):
        assert got[i] == pytest.approx(manual_log_p(tiny_bart, REFS[i], CANDS[i], tag), abs=1e-5)
    plain = metrics.get("prism", backbone=str(tiny_bart), variant="P", target_prefix=None, device="cpu")
    bart = metrics.get("bartscore", backbone=str(tiny_bart), variant="P", device="cpu")
    np.testing.assert_allclose(plain.score(CANDS, REFS), bart.score(CANDS, REFS))
    assert "target_prefix:<en>" in m.signature


def test_frugalscore_reads_candidate_then_reference(tiny_bert_regressor):
    import torch

    m = metrics.get("frugalscore", backbone=str(tiny_bert_regressor), device="cpu")
    got = m.score(CANDS, REFS)
    tok, model = models.load_sequence_regression(str(tiny_bert_regressor), "cpu")
    with torch.no_grad():
        want = model(**tok(CANDS, REFS, padding=True, return_tensors="pt")).logits[:, 0].double().numpy()
        swapped = model(**tok(REFS, CANDS, padding=True, return_tensors="pt")).logits[:, 0].double().numpy()
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert not np.allclose(got, swapped)


def test_generation_metrics_reject_wrong_backbones(tiny_bert):
    with pytest.raises(MetricError, match="bartscore takes seq2seq backbones"):
        metrics.get("bartscore", backbone=str(tiny_bert))
    with pytest.raises(MetricError, match="frugalscore takes frugalscore or regression backbones"):
        metrics.get("frugalscore", backbone=str(tiny_bert))
