"""Trained parts on a frozen tiny encoder: the UniLM paraphraser and the masked-LM head (train, save, load, score)."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_models import CORPUS

from metricbias import backbones, metrics
from metricbias.metrics import generation
from metricbias.trained import mlm_head, paraphraser, parts

SOURCES = ["The nurse helped the doctor because she was kind.", "A man is playing a guitar."]
TARGETS = ["The nurse helped the doctor since she was kind.", "A man plays the guitar."]


@pytest.fixture(scope="module")
def trained_para(tiny_bert, tmp_path_factory):
    examples = pd.DataFrame({"text": CORPUS + CORPUS[::-1], "target": CORPUS[1:] + CORPUS[:1] + CORPUS,
                             "pair": [f"p{i}" for i in range(10)]})
    config = paraphraser.Config(base=str(tiny_bert), adapter_layers=1, steps=12, batch_size=5, lr=3e-2, eval_every=6)
    out = tmp_path_factory.mktemp("para") / "para-tiny"
    saved = paraphraser.train(config, out, name="para-tiny", examples=examples, validation=examples.head(2),
                              device="cpu", progress=False)
    return out, saved


@pytest.fixture(scope="module")
def trained_mlm(tiny_bert, tmp_path_factory):
    config = mlm_head.Config(base=str(tiny_bert), epochs=6, batch_size=16, lr=1e-2, maskings=3,
                             validation_fraction=0.2)
    out = tmp_path_factory.mktemp("mlm") / "mlm-tiny"
    sentences = CORPUS + [s.upper() for s in CORPUS] + [s.replace("the", "a") for s in CORPUS]
    saved = mlm_head.train(config, out, name="mlm-tiny", sentences=sentences, device="cpu", progress=False)
    return out, saved


def test_paraphraser_training_lowers_its_loss_and_records_provenance(trained_para):
    out, saved = trained_para
    assert saved["figures"]["final_train_loss"] < saved["figures"]["first_loss"] - 0.2
    info = json.loads((out / "provenance.json").read_text())
    assert info["kind"] == "seq2seq" and info["steps"] == 12 and info["seed"] == 0 and info["device"] == "cpu"
    assert info["base_fingerprint"] == backbones.fingerprint_path(info["base"])
    assert {"torch", "transformers", "adapters"} <= set(info["library_versions"])
    assert info["data"]["train_examples"] == 10 and len(info["data"]["train_fingerprint"]) == 16
    assert backbones.kind_of(str(out)) == "seq2seq"
    assert (out / parts.PARTS_FILE).stat().st_size < parts.MAX_FILE_BYTES


def test_unilm_mask_source_bidirectional_target_left_to_right(trained_para):
    para = paraphraser.load(str(trained_para[0]), "cpu")
    a = para.encode(["The cat sat on the mat."], ["The dog slept by the door."])
    b = para.encode(["The cat sat on the mat."], ["The dog slept by a window."])
    with torch.no_grad():
        lp_a, _ = para.log_probs(a)
        lp_b, _ = para.log_probs(b)
    same = next(i for i, (x, y) in enumerate(zip(a[0][1], b[0][1])) if x != y)
    # a target token's probability depends only on the source and the target tokens before it
    assert same >= 3
    np.testing.assert_allclose(lp_a[:same].numpy(), lp_b[:same].numpy(), rtol=0, atol=1e-5)
    # ... and the tokens after a changed one see the change
    assert abs(float(lp_a[same + 1] - lp_b[same + 1])) > 1e-6
    # every target token sees the whole source: changing its last word changes the first target token's probability
    c = para.encode(["The cat sat on the rug."], ["The dog slept by the door."])
    with torch.no_grad():
        lp_c, _ = para.log_probs(c)
    assert abs(float(lp_c[0] - lp_a[0])) > 1e-6


def test_cached_lower_layers_give_the_full_forward(trained_para):
    para = paraphraser.load(str(trained_para[0]), "cpu")
    enc = para.encode(SOURCES, TARGETS)
    with torch.no_grad():
        full, _ = para.log_probs(enc)
        cached, _ = para.log_probs(enc, lower_hidden=para.lower(para.pack([(s, [t]) for s, t in enc])))
    np.testing.assert_allclose(full.numpy(), cached.numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("base", ["bert", "mpnet"])
def test_pairs_sharing_a_source_packed_in_one_row_score_as_one_row_each(base, tiny_bert, tmp_path):
    """Packing (the source once, the targets as a prefix tree) changes no log-likelihood: BERT's absolute
    positions and MPNet's relative position bias both follow each token's position in its own sequence."""
    from tiny_models import save_tiny_mpnet

    folder = tiny_bert if base == "bert" else save_tiny_mpnet(tmp_path / "tiny-mpnet")
    para = paraphraser.Paraphraser.new(paraphraser.Config(base=str(folder), adapter_layers=1), folder, "cpu")
    torch.manual_seed(1)
    with torch.no_grad():  # the new adapter starts near the identity: move it, so the top layer counts
        for p in para.adapter_parameters(para.model).values():
            p.normal_(0, 0.2)
    ref = "The nurse helped the doctor because she was kind."
    sources = [ref, ref, ref, ref, "A man is playing a guitar.", ref]
    targets = ["The nurse helped the doctor because he was kind.", "The nurse helped the doctor because she was kind.",
               "The nurse thanked the doctor.", "A man plays the guitar.", "A man plays the guitar.",
               "The nurse helped the doctor because he was kind."]  # shared prefixes, a repeated pair
    packed = para.log_likelihood(sources, targets, batch_size=4)
    with torch.no_grad():
        alone = [float(para.log_probs(para.encode([s], [t]))[0].double().mean()) for s, t in zip(sources, targets)]
    np.testing.assert_allclose(packed, alone, rtol=0, atol=1e-5)
    # the four targets of the shared source in one row, their common first tokens once: the second target shares
    # "the nurse helped the doctor because" (6 tokens) with the first, the third "the nurse" (2)
    enc = para.encode(sources[:4], targets[:4])
    rows = para.pack([(enc[0][0], [t for _, t in enc])])
    assert rows.ids.shape[0] == 1
    assert len(rows.tokens) == sum(len(t) for _, t in enc) - 6 - 2


def test_generation_metrics_score_with_the_paraphraser_and_survive_a_reload(trained_para):
    out = str(trained_para[0])
    bart = {v: metrics.get("bartscore", backbone=out, variant=v, device="cpu") for v in "PRF"}
    prism = metrics.get("prism", backbone=out, device="cpu")
    assert prism.options["target_prefix"] is None and "base:" in prism.signature
    p, r, f = (bart[v].score(TARGETS, SOURCES) for v in "PRF")
    para = paraphraser.load(out, "cpu")
    np.testing.assert_allclose(p, para.log_likelihood(SOURCES, TARGETS), rtol=0, atol=1e-12)  # P = log p(cand | ref)
    np.testing.assert_allclose(r, para.log_likelihood(TARGETS, SOURCES), rtol=0, atol=1e-12)
    np.testing.assert_allclose(f, (p + r) / 2)
    np.testing.assert_array_equal(prism.score(TARGETS, SOURCES), f)  # PRISM-F = BARTScore-F without a tag
    assert np.all(p < 0)
    # save -> load round trip: a fresh load (no process cache) gives identical scores
    paraphraser._LOADED.clear()
    generation._PARAPHRASER_LL.clear()
    again = metrics.get("bartscore", backbone=out, variant="F", device="cpu").score(TARGETS, SOURCES)
    np.testing.assert_array_equal(again, f)
    # recording figures in the provenance (quality measured after training) does not change the signature
    from metricbias.book import training_data

    before = bart["F"].signature
    training_data.record_quality(out, pd.DataFrame({"dataset": ["stsb-dev"], "statistic": ["pearson"], "value": [0.1],
                                                    "n": [2], "sample_size": [2], "signature": [before]}))
    assert json.loads((trained_para[0] / "provenance.json").read_text())["quality"]["rows"][0]["value"] == 0.1
    assert metrics.get("bartscore", backbone=out, variant="F", device="cpu").signature == before
    with pytest.raises(metrics.MetricError, match="no language tag"):
        metrics.get("prism", backbone=out, target_prefix="<en>", device="cpu").score(TARGETS, SOURCES)


def test_a_changed_base_is_refused(trained_para, tmp_path):
    info = json.loads((trained_para[0] / "provenance.json").read_text())
    assert parts.base_of(info, trained_para[0]) is not None
    with pytest.raises(parts.PartsError, match="frozen backbone changed"):
        parts.base_of({**info, "base_fingerprint": "0" * 12}, trained_para[0])


def test_mlm_head_training_lowers_its_loss(trained_mlm):
    _, saved = trained_mlm
    fig = saved["figures"]
    assert fig["final_train_loss"] < fig["first_loss"] - 0.5
    assert fig["masked_token_accuracy"] >= fig["masked_token_accuracy_untrained_head"]
    assert saved["kind"] == "mlm" and saved["data"]["validation_sentences"] == 3


def test_mlm_head_round_trip_gives_identical_pll_scores(trained_mlm):
    from metricbias.bias import pll

    pairs = pd.DataFrame({"stereotype": ["The nurse helped the doctor because she was kind."],
                          "anti_stereotype": ["The nurse helped the doctor because he was kind."],
                          "bias_type": ["gender"]})
    first = pll.score_sentence_pairs(pll.load_masked_lm(str(trained_mlm[0]), device="cpu"), pairs)
    again = pll.score_sentence_pairs(pll.load_masked_lm(str(trained_mlm[0]), device="cpu"), pairs)
    pd.testing.assert_frame_equal(first, again)
    assert np.isfinite(first[["score_st", "score_at"]].to_numpy()).all()
    assert set(first["method"]) == {"aul", "cps", "sss"}


def test_bert_masking_selects_fifteen_percent_and_never_special_tokens():
    rng = np.random.default_rng(0)
    ids, special = list(range(100, 142)), [1] + [0] * 40 + [1]
    out, chosen, flags = mlm_head.mask_tokens(ids, special, rng, mask_id=7, vocab_size=1000, fraction=0.15)
    assert len(chosen) == 6 and 0 not in chosen and 41 not in chosen
    assert all(out[p] == 7 for p, f in zip(chosen, flags) if f)
    assert all(out[i] == ids[i] for i in range(42) if i not in chosen)


def test_liu_table2_row_on_a_trained_head(trained_mlm):
    from metricbias.bias import pll
    from metricbias.book.reproduction import liu2024

    from metricbias.book.reproduction import liu_table2

    lm = pll.load_masked_lm(str(trained_mlm[0]), device="cpu")
    scores = liu2024.pll_scores([lm], sample_size=6)
    ours = liu2024.table2_from_scores(scores)
    assert list(ours["baseline measure"]) == ["SSS", "CPS"] and set(ours["n_pairs"]) == {6}
    assert ours[["baseline", "AUL"]].apply(lambda c: c.between(0, 100)).all().all()
    assert ours["KLS"].between(50, 100).all()
    intervals = liu_table2.indicator_intervals(scores, n_resamples=99).set_index(["dataset", "measure"])
    for r in ours.to_dict("records"):  # the interval's centre is the Table 2 value of the same scores
        for measure, column in ((r["baseline measure"], "baseline"), ("AUL", "AUL")):
            row = intervals.loc[(r["dataset"], measure)]
            assert row["value"] == pytest.approx(r[column]) and row["ci_low"] <= row["value"] <= row["ci_high"]
    assert set(intervals["n_pairs"]) == {6}
    table = liu_table2.beside(intervals.reset_index(), ours)
    assert len(table) == 8 and set(table["masked LM"]) == {lm.name}  # SSS, AUL, KLS, JSS on each dataset
    accuracy = liu_table2.head_accuracy([lm.name, "no-such-masked-lm"])
    assert accuracy[lm.name] == trained_mlm[1]["figures"]["masked_token_accuracy"]
    assert np.isnan(accuracy["no-such-masked-lm"])


def test_mask_twins_predict_each_target_token_from_the_source_and_earlier_tokens(tiny_bert):
    """With ``predict="mask"`` a target token's twin is a [MASK] at the token's position; the row of one pair scores
    exactly as a plain masked-LM pass over ``[CLS] source [SEP] t_1 .. t_(j-1) [MASK]`` under the UniLM mask would."""
    para = paraphraser.Paraphraser.new(paraphraser.Config(base=str(tiny_bert), adapter_layers=1), tiny_bert, "cpu")
    (src, tgt), = para.encode(["A man is playing a guitar."], ["A man plays the guitar."])
    with torch.no_grad():
        lp, _ = para.log_probs([(src, tgt)])
        for j in (0, 2, len(tgt) - 1):  # the twin of target token j against a row that ends in that twin
            ids = torch.tensor([src + tgt[:j] + [para.tokenizer.mask_token_id]])
            n = ids.shape[1]
            mask = torch.tril(torch.ones(n, n))
            mask[:, :len(src)] = 1.0  # the source sees the source; the target and the twin see it and their past
            mask[:len(src), len(src):] = 0.0
            packed = paraphraser.Packed(ids, mask[None], torch.arange(n)[None], torch.tensor([0]),
                                        torch.tensor([n - 1]), torch.tensor([tgt[j]]), [[[0]]])
            alone = para.node_log_probs(packed)
            np.testing.assert_allclose(float(alone[0]), float(lp[j]), rtol=0, atol=1e-5)


def test_artifacts_without_a_predict_field_load_as_shift_and_head_from_copies_the_head(trained_para, trained_mlm,
                                                                                      tmp_path):
    import shutil

    old = tmp_path / "para-old"
    shutil.copytree(trained_para[0], old)
    info = json.loads((old / "provenance.json").read_text())
    assert info["config"]["predict"] == "mask"
    del info["config"]["predict"]
    (old / "provenance.json").write_text(json.dumps(info))
    assert paraphraser.Paraphraser.load(old).config.predict == "shift"

    head = mlm_head.load(str(trained_mlm[0]))[1]
    config = paraphraser.Config(base=trained_mlm[1]["base"], adapter_layers=1, steps=1, batch_size=2,
                                head_from=str(trained_mlm[0]), lr=0.0, weight_decay=0.0)
    examples = pd.DataFrame({"text": CORPUS[:4], "target": CORPUS[1:5], "pair": ["a", "b", "c", "d"]})
    saved = paraphraser.train(config, tmp_path / "para-head", name="para-head", examples=examples,
                              validation=examples.head(1), device="cpu", progress=False)
    para = paraphraser.Paraphraser.load(tmp_path / "para-head")
    for key, value in paraphraser.head_parameters(head).items():
        torch.testing.assert_close(paraphraser.head_parameters(para.model)[key], value)
    assert saved["head_from"] == "mlm-tiny"


def test_denoising_pairs_delete_a_seeded_share_of_the_words():
    from metricbias.book import training_data

    sentences = [f"word{i} " * 20 for i in range(30)] + ["one", "the cat sat on the mat"]
    sentences = [s.strip() for s in sentences]
    examples, counts = training_data.denoising_pairs(sentences, 10, seed=3)
    again, _ = training_data.denoising_pairs(sentences, 10, seed=3)
    pd.testing.assert_frame_equal(examples, again)
    assert len(examples) == 10 and counts["pairs_used"].iloc[0] == 10
    assert set(examples["target"]) <= set(sentences)
    for text, target in zip(examples["text"], examples["target"]):
        words, kept = target.split(), text.split()
        if len(words) > 1:
            assert len(words) - len(kept) == max(1, round(training_data.DENOISE_DROP * len(words)))
            it = iter(words)
            assert all(w in it for w in kept)  # the source is the target with words deleted, in order


def test_a_packed_row_wider_than_the_position_buffer_scores_as_its_rows(trained_para):
    """Many long targets of one source pack into a row wider than BERT's 512-column buffers; positions stay per
    target, so the row still scores like each pair alone."""
    para = paraphraser.load(str(trained_para[0]), "cpu")
    source = " ".join(["the nurse helped the doctor"] * 4)
    targets = [f"{source} number {i} " + "again " * (i % 3) for i in range(16)]
    encoded = para.encode([source], targets[:1])
    assert len(encoded[0][0]) + 2 * sum(len(para.encode([source], [t])[0][1]) for t in targets) > 512
    packed = para.log_likelihood([source] * len(targets), targets, batch_size=16)
    with torch.no_grad():
        alone = [float(para.log_probs(para.encode([source], [t]))[0].double().mean()) for t in targets[:3]]
    np.testing.assert_allclose(packed[:3], alone, rtol=0, atol=1e-5)
