"""Masked-LM heads in chunks (issue 42): cached features and checkpoints, a resumed run equal to an uninterrupted
one, the batch order from the step number, and the reference point of masked-token accuracy."""

import json

import numpy as np
import pytest
import torch
from tiny_models import CORPUS

from metricbias.trained import loop, mlm_head, parts

SENTENCES = CORPUS + [s.upper() for s in CORPUS] + [s.replace("the", "a") for s in CORPUS] + \
    [s.lower() for s in CORPUS]
EXTRA = [s[::-1] for s in CORPUS] + [s.replace("a", "o") for s in CORPUS]


def _config(tiny_bert, **kw):
    options = dict(base=str(tiny_bert), epochs=3, batch_size=8, lr=1e-2, maskings=2, validation_fraction=0.2,
                   max_extra=6, chunk_sentences=4, checkpoint_every=3, dropout=0.1, bias_init="log_frequency",
                   select="loss", eval_every=4)
    return mlm_head.Config(**{**options, **kw})


def _tensors(folder):
    return parts.load(folder)[0]


def test_most_frequent_token_accuracy_by_hand():
    # training tokens: 5 three times, 2 twice, 9 once -> 5; validation positions: labels 5, 7, 5, 2 with the third
    # not replaced by [MASK] (a kept or random token, not counted): 1 hit of 3 counted positions
    token, acc = mlm_head.most_frequent_token_accuracy([5, 2, 5, 9, 2, 5], [5, 7, 5, 2], [True, True, False, True])
    assert token == 5 and acc == pytest.approx(1 / 3)
    # a tie goes to the smaller id
    assert mlm_head.most_frequent_token_accuracy([4, 3, 4, 3], [3, 4], [True, True]) == (3, 0.5)
    with pytest.raises(ValueError, match="no training tokens"):
        mlm_head.most_frequent_token_accuracy([], [1], [True])


def test_epoch_batches_follow_from_the_step_number():
    full = loop.epoch_batches(10, 4, seed=3)
    steps = [next(full) for _ in range(9)]  # 3 batches an epoch (4, 4, 2)
    assert [len(b) for b in steps[:3]] == [4, 4, 2] and sorted(sum(steps[:3], [])) == list(range(10))
    for start in (0, 2, 3, 7):
        resumed = loop.epoch_batches(10, 4, seed=3, start=start)
        assert [next(resumed) for _ in range(9 - start)] == steps[start:]
    assert steps[:3] != steps[3:6]  # a new permutation each epoch


def test_chunk_plan_is_stable_when_extra_sentences_are_added():
    config = mlm_head.Config(chunk_sentences=4, maskings=2)
    assert mlm_head.chunk_plan(10, config) == [(0, 0, 4), (0, 4, 8), (0, 8, 10), (1, 0, 4), (1, 4, 8), (1, 8, 10)]
    assert mlm_head.chunk_plan(14, config)[:2] == mlm_head.chunk_plan(10, config)[:2]
    # the last 5 of 10 sentences are extra sentences, masked once: the second masking covers the first 5 alone
    once = mlm_head.Config(chunk_sentences=4, maskings=2, extra_maskings=1)
    assert mlm_head.chunk_plan(10, once, n_extra=5) == [(0, 0, 4), (0, 4, 8), (0, 8, 10), (1, 0, 4), (1, 4, 5)]
    with pytest.raises(ValueError, match="more than maskings"):
        mlm_head.chunk_plan(10, mlm_head.Config(maskings=1, extra_maskings=2), n_extra=5)


@pytest.mark.parametrize("autocast", ["", "bfloat16"])
def test_resumed_training_gives_the_weights_of_an_uninterrupted_run(tiny_bert, tmp_path, autocast):
    config = _config(tiny_bert, autocast=autocast)
    whole = mlm_head.train(config, tmp_path / "whole", name="mlm-tiny", sentences=SENTENCES, extra_sentences=EXTRA,
                           device="cpu", progress=False)
    run = tmp_path / "parts.run"
    assert mlm_head.train(config, tmp_path / "parts", name="mlm-tiny", sentences=SENTENCES, extra_sentences=EXTRA,
                          device="cpu", progress=False, run_dir=run, stop_after=4) is None
    assert not (tmp_path / "parts").exists() and [p.name for p in mlm_head.checkpoints(run)] == ["step-000003",
                                                                                                  "step-000004"]
    assert mlm_head.train(config, tmp_path / "parts", name="mlm-tiny", sentences=SENTENCES, extra_sentences=EXTRA,
                          device="cpu", progress=False, run_dir=run, stop_after=3) is None  # a second session
    done = mlm_head.train(config, tmp_path / "parts", name="mlm-tiny", sentences=SENTENCES, extra_sentences=EXTRA,
                          device="cpu", progress=False, run_dir=run)
    a, b = _tensors(tmp_path / "whole"), _tensors(tmp_path / "parts")
    assert set(a) == set(b)
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0)
    assert done["resumed_at_step"] == 7 and whole["resumed_at_step"] is None
    assert done["steps"] == whole["steps"] and done["kept_step"] == whole["kept_step"]
    for key in ("masked_token_accuracy", "validation_loss", "first_loss", "final_train_loss", "log"):
        assert done["figures"][key] == whole["figures"][key]
    assert done["data"]["validation_fingerprint"] == whole["data"]["validation_fingerprint"]
    assert json.loads((run / "done.json").read_text())["out"] == str(tmp_path / "parts")


def test_features_are_cached_by_chunk_and_a_changed_configuration_refuses_the_checkpoints(tiny_bert, tmp_path):
    config = _config(tiny_bert, epochs=1)
    run = tmp_path / "run"
    mlm_head.train(config, tmp_path / "a", name="mlm-tiny", sentences=SENTENCES, extra_sentences=EXTRA,
                   device="cpu", progress=False, run_dir=run, stop_after=1)
    chunks = sorted((run / "features").rglob("*.safetensors"))
    n_train = len(mlm_head.data_split(config, SENTENCES, EXTRA)[0])
    assert len(chunks) == len(mlm_head.chunk_plan(n_train, config)) == 2 * -(-n_train // 4)
    stamps = [c.stat().st_mtime_ns for c in chunks]
    with pytest.raises(parts.PartsError, match="another configuration"):
        mlm_head.train(_config(tiny_bert, epochs=1, lr=5e-3), tmp_path / "a", name="mlm-tiny", sentences=SENTENCES,
                       extra_sentences=EXTRA, device="cpu", progress=False, run_dir=run)
    # a fresh start with another learning rate reads the same features
    mlm_head.train(_config(tiny_bert, epochs=1, lr=5e-3), tmp_path / "a", name="mlm-tiny", sentences=SENTENCES,
                   extra_sentences=EXTRA, device="cpu", progress=False, run_dir=run, resume=False)
    assert [c.stat().st_mtime_ns for c in sorted((run / "features").rglob("*.safetensors"))] == stamps


def test_a_saved_head_measured_again_and_its_reference_point(tiny_bert, tmp_path):
    config = _config(tiny_bert, epochs=1, select="last", dropout=0.0, bias_init="zero")
    saved = mlm_head.train(config, tmp_path / "h", name="mlm-tiny", sentences=SENTENCES, extra_sentences=EXTRA,
                           device="cpu", progress=False)
    again = mlm_head.measure(str(tmp_path / "h"), SENTENCES, EXTRA)
    assert again["masked_token_accuracy"] == saved["figures"]["masked_token_accuracy"]
    assert again["most_frequent_token_accuracy"] == saved["figures"]["most_frequent_token_accuracy"]
    assert again["train_fingerprint_matches"]
    # the reference point by hand: the most frequent token of the training side of SENTENCES (no extra sentences)
    tokenizer = mlm_head.load(str(tmp_path / "h"))[0]
    train_s, val_s, extra = mlm_head.data_split(config, SENTENCES, EXTRA)
    ids = [t for s in train_s[:len(train_s) - len(extra)] for t in tokenizer(s)["input_ids"][1:-1]]
    values, counts = np.unique(ids, return_counts=True)
    assert saved["figures"]["most_frequent_token"] == tokenizer.convert_ids_to_tokens(int(values[np.argmax(counts)]))
    with pytest.raises(parts.PartsError, match="validation sentences"):
        mlm_head.measure(str(tmp_path / "h"), SENTENCES[::-1], EXTRA)
