"""The BLEURT-style regression metric: training (tiny model, a few steps), saving, reloading, BLEURT checkpoints."""

import json

import numpy as np
import pandas as pd
import pytest

from metricbias import metrics, models
from metricbias.datasets import stsb
from metricbias.datasets.published import DatasetError
from metricbias.metrics import regression
from metricbias.metrics.base import MetricError

PAIRS = pd.DataFrame({
    "sentence1": ["A man is playing a guitar.", "A woman is singing.", "The cat sat on the mat.",
                  "The nurse was kind.", "A dog runs in a field.", "The doctor helped the nurse."],
    "sentence2": ["A man plays a guitar.", "A man is cooking.", "A cat is sitting on a mat.",
                  "The weather is cold.", "A dog is running through grass.", "The stock market fell."],
    "score": [4.8, 0.6, 4.2, 0.2, 3.9, 0.0],
})


@pytest.fixture
def trained(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    config = regression.TrainConfig(backbone=str(tiny_bert), epochs=2, max_steps=4, batch_size=3, learning_rate=1e-3,
                                    frozen_layers=1)
    saved = regression.train("tiny-sts", config, device="cpu", progress=False, train_data=PAIRS, dev_data=PAIRS)
    return saved


def test_training_saves_a_model_that_reloads_by_name(trained, tmp_path):
    folder = tmp_path / "cache" / "regression" / "tiny-sts"
    assert {p.name for p in folder.iterdir()} == {"encoder", "head.safetensors", "regression.json"}
    config = json.loads((folder / "regression.json").read_text())
    assert config["steps"] == 4 and config["seed"] == 0 and config["pooling"] == "cls"
    assert -1 <= config["dev_pearson"] <= 1 and config["train_rows_used"] == 6
    m = metrics.get("regression", backbone="tiny-sts", device="cpu")
    scores = m.score(PAIRS["sentence2"].tolist(), PAIRS["sentence1"].tolist())
    tok, model, _ = regression.load("tiny-sts", "cpu")
    from metricbias.metrics.regression_model import predict

    np.testing.assert_allclose(scores, predict(tok, model, PAIRS["sentence1"].tolist(), PAIRS["sentence2"].tolist()))
    assert m.signature.startswith("metric:regression|backbone:tiny-sts|weights:")


def test_training_is_deterministic_given_the_seed(trained, tiny_bert):
    again = regression.train("tiny-sts-again", regression.TrainConfig(
        backbone=str(tiny_bert), epochs=2, max_steps=4, batch_size=3, learning_rate=1e-3, frozen_layers=1),
        device="cpu", progress=False, train_data=PAIRS, dev_data=PAIRS)
    assert again["final_loss"] == trained["final_loss"]
    assert again["dev_pearson"] == trained["dev_pearson"]
    a = metrics.get("regression", backbone="tiny-sts", device="cpu").score(["a b"], ["a c"])
    b = metrics.get("regression", backbone="tiny-sts-again", device="cpu").score(["a b"], ["a c"])
    np.testing.assert_allclose(a, b)


def test_untrained_recipe_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "empty"))
    with pytest.raises(MetricError, match="not trained yet; run `metricbias train-regression --name stsb-all"):
        metrics.get("regression")


def test_bleurt_checkpoint_path_reads_reference_then_candidate(tiny_bert_regressor):
    import torch

    cands, refs = ["The nurse was kind.", "A cat."], ["The doctor was kind.", "A dog sleeps."]
    got = metrics.get("regression", backbone=str(tiny_bert_regressor), device="cpu").score(cands, refs)
    tok, model = models.load_sequence_regression(str(tiny_bert_regressor), "cpu")
    with torch.no_grad():
        want = model(**tok(refs, cands, padding=True, return_tensors="pt")).logits[:, 0].double().numpy()
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_regression_adapter_is_attached_to_the_encoder(trained, tiny_bert, tmp_path):
    import adapters
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(str(tmp_path / "cache" / "regression" / "tiny-sts" / "encoder"))
    adapters.init(model)
    model.add_adapter("debias", config="seq_bn")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "adapters" in name:
                p.add_(torch.randn_like(p))
    model.save_adapter(str(tmp_path / "adapter"), "debias")
    plain = metrics.get("regression", backbone="tiny-sts", device="cpu")
    adapted = metrics.get("regression", backbone="tiny-sts", device="cpu", adapter=str(tmp_path / "adapter"))
    assert plain.signature != adapted.signature
    assert not np.allclose(plain.score(["a b c"], ["a b d"]), adapted.score(["a b c"], ["a b d"]))


def test_stsb_reader(tmp_path):
    good = tmp_path / "dev.tsv"
    good.write_text("0\tx\ty\t2012\t1\tnone\tnone\tA plane.\tAn air plane.\t5.000\n")
    assert stsb.read(good).to_dict("records") == [{"sentence1": "A plane.", "sentence2": "An air plane.", "score": 5.0}]
    bad = tmp_path / "bad.tsv"
    bad.write_text("0\tx\ty\t2012\t1\tnone\tnone\tA plane.\tAn air plane.\tfive\n")
    with pytest.raises(DatasetError, match="bad.tsv, line 1: rating 'five' is not a number"):
        stsb.read(bad)
    real = stsb.load("dev")
    assert len(real) == 1500 and real["score"].between(0, 5).all()


def test_train_regression_command_on_stsb(tiny_bert, tmp_path, monkeypatch, capsys):
    from metricbias import cli

    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    args = ["train-regression", "--name", "tiny-stsb", "--backbone", str(tiny_bert), "--max-steps", "2",
            "--device", "cpu"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "trained tiny-stsb on 4249 STS-B train pairs (2 steps" in out and "on 1500 pairs" in out
    assert cli.main(args) == 0
    assert "already trained" in capsys.readouterr().out
    config = regression.trained_config("tiny-stsb")
    assert config["backbone"] == str(tiny_bert) and config["train_rows_used"] == 4249
