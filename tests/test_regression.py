"""The BLEURT-style regression metric: a frozen backbone + task adapter + head, trained (tiny model, a few
steps), saved, reloaded by name and by folder; the shipped model; BLEURT checkpoints."""

import json

import numpy as np
import pandas as pd
import pytest

from metricbias import backbones, metrics, models, sources
from metricbias.datasets import stsb
from metricbias.datasets.published import DatasetError
from metricbias.metrics import regression
from metricbias.metrics import regression_model as rm
from metricbias.trained.parts import PartsError

PAIRS = pd.DataFrame({
    "sentence1": ["A man is playing a guitar.", "A woman is singing.", "The cat sat on the mat.",
                  "The nurse was kind.", "A dog runs in a field.", "The doctor helped the nurse."],
    "sentence2": ["A man plays a guitar.", "A man is cooking.", "A cat is sitting on a mat.",
                  "The weather is cold.", "A dog is running through grass.", "The stock market fell."],
    "score": [4.8, 0.6, 4.2, 0.2, 3.9, 0.0],
})


def tiny_config(tiny_bert, **kw):
    base = dict(backbone=str(tiny_bert), adapter="seq_bn[reduction_factor=4]", epochs=2, max_steps=4, batch_size=3,
                learning_rate=1e-2)
    return rm.TrainConfig(**{**base, **kw})


@pytest.fixture
def tiny_backbone(tiny_bert, tmp_path, monkeypatch):
    """A registered trained regression backbone ``stsb-tiny`` on the tiny BERT, with an empty cache."""
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(backbones.BACKBONES, "stsb-tiny", backbones.Backbone(
        "stsb-tiny", "regression", base=str(tiny_bert), train_command="metricbias train-regression --name stsb-tiny"))
    return "stsb-tiny"


@pytest.fixture
def trained(tiny_backbone, tiny_bert):
    return regression.train(tiny_backbone, tiny_config(tiny_bert), device="cpu", progress=False, train_data=PAIRS,
                            dev_data=PAIRS)


def test_an_untrained_backbone_names_its_training_command(tiny_backbone):
    with pytest.raises(backbones.BackboneError, match="train it with `metricbias train-regression --name stsb-tiny`"):
        metrics.get("regression", backbone=tiny_backbone)


def test_training_saves_small_parts_that_resolve_by_name(trained, tiny_backbone, tmp_path):
    folder = tmp_path / "cache" / "trained" / tiny_backbone
    assert backbones.resolve(tiny_backbone) == folder
    assert {p.name for p in folder.iterdir()} == {"adapter", "head.safetensors", "regression.json", "provenance.json"}
    assert {p.name for p in (folder / "adapter").iterdir()} == {"adapter_config.json", "adapter.safetensors"}
    prov = json.loads((folder / "provenance.json").read_text())
    assert prov["steps"] == 4 and prov["seed"] == 0 and prov["device"] == "cpu" and prov["train_rows"] == 6
    assert prov["files"].keys() == {"adapter/adapter_config.json", "adapter/adapter.safetensors", "head.safetensors",
                                    "regression.json"}
    # seq_bn at reduction 4 on hidden 32: a 32 -> 8 -> 32 bottleneck in each of 2 layers, plus the 32 -> 1 head
    assert prov["trainable_parameters"] == 2 * (32 * 8 + 8 + 8 * 32 + 32) + 33
    assert prov["base_fingerprint"] == backbones.fingerprint(prov["base"])
    m = metrics.get("regression", backbone=tiny_backbone, device="cpu")
    assert m.signature.startswith(f"metric:regression|backbone:{tiny_backbone}|weights:")
    assert f"|base:{prov['base_fingerprint']}|" in m.signature


def test_scores_after_save_and_load_equal_the_trained_models(trained, tiny_backbone, tiny_bert):
    """train() reports the dev Pearson and check scores of the in-memory model; the saved one must give them back."""
    from scipy import stats

    m = metrics.get("regression", backbone=tiny_backbone, device="cpu")
    got = m.score(PAIRS["sentence2"].tolist(), PAIRS["sentence1"].tolist())
    assert stats.pearsonr(got * rm.RATING_SCALE, PAIRS["score"]).statistic == trained["figures"]["stsb_dev_pearson"]
    assert got.tolist() == trained["check"]["scores"]  # 6 rows < CHECK_ROWS: all of them, bit for bit


def test_the_backbone_stays_frozen_and_identical(trained, tiny_backbone, tiny_bert):
    import torch
    from transformers import AutoModel

    _, model, _ = regression.load(tiny_backbone, "cpu")
    original = AutoModel.from_pretrained(str(tiny_bert)).state_dict()
    encoder = {k: v for k, v in model.encoder.state_dict().items() if "adapters" not in k and "prompt_tuning" not in k}
    assert encoder.keys() == original.keys()
    for name, value in encoder.items():
        assert torch.equal(value, original[name]), name
    assert [str(a) for a in model.encoder.active_adapters] == [rm.TASK_ADAPTER]


def test_training_is_deterministic_given_the_seed(trained, tiny_bert, tmp_path):
    again = regression.train("other", tiny_config(tiny_bert), out=tmp_path / "again", device="cpu", progress=False,
                             train_data=PAIRS, dev_data=PAIRS)
    assert again["final_loss"] == trained["final_loss"]
    assert again["check"]["scores"] == trained["check"]["scores"]
    a = metrics.get("regression", backbone="stsb-tiny", device="cpu").score(["a b"], ["a c"])
    b = metrics.get("regression", backbone=str(tmp_path / "again"), device="cpu").score(["a b"], ["a c"])
    assert a.tolist() == b.tolist()


def test_a_changed_base_backbone_is_refused(trained, tiny_backbone, tmp_path):
    folder = backbones.resolve(tiny_backbone)
    prov = json.loads((folder / "provenance.json").read_text())
    (folder / "provenance.json").write_text(json.dumps({**prov, "base_fingerprint": "000000000000"}))
    with pytest.raises(PartsError, match="trained on .* with fingerprint 000000000000"):
        regression.load(tiny_backbone, "cpu")


@pytest.mark.parametrize("name", ["stsb-all-MiniLM-L6-v2", "stsb-all-mpnet-base-v2"])
def test_shipped_model_reaches_its_target_and_scores_as_recorded(name):
    """models/stsb-*: frozen backbone + task adapter + head, Pearson >= 0.830 on STS-B dev (issue 17), and the loaded
    model gives the scores the trained one recorded before it was saved. MPNet only where it is installed."""
    base = backbones.BACKBONES[name].base
    if base not in backbones.available():
        pytest.skip(f"{base} is not installed here (`metricbias install-backbone {base}`)")
    prov = regression.provenance(name)
    assert prov["folder"].endswith(f"models/{name}")
    assert prov["base"] == base and prov["base_fingerprint"] == backbones.fingerprint(base)
    assert prov["figures"]["stsb_dev_pearson"] >= 0.830 and prov["dev_rows"] == 1500
    assert prov["data"] == {f: sources.source(f).sha256 for f in rm.STSB_FILES}
    for f, size in prov["files"].items():
        assert size <= 8 * 2**20 and (backbones.resolve(name) / f).stat().st_size == size
    dev = stsb.load("dev").head(prov["check"]["stsb_dev_rows"])
    got = metrics.get("regression", backbone=name, device="cpu").score(dev["sentence2"].tolist(),
                                                                      dev["sentence1"].tolist())
    np.testing.assert_allclose(got, prov["check"]["scores"], rtol=0, atol=1e-6)


def test_bleurt_checkpoint_path_reads_reference_then_candidate(tiny_bert_regressor):
    import torch

    cands, refs = ["The nurse was kind.", "A cat."], ["The doctor was kind.", "A dog sleeps."]
    got = metrics.get("regression", backbone=str(tiny_bert_regressor), device="cpu").score(cands, refs)
    tok, model = models.load_sequence_regression(str(tiny_bert_regressor), "cpu")
    with torch.no_grad():
        want = model(**tok(refs, cands, padding=True, return_tensors="pt")).logits[:, 0].double().numpy()
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_an_adapter_stacks_on_the_task_adapter(trained, tiny_backbone, tmp_path):
    import adapters
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(str(backbones.BACKBONES[tiny_backbone].base))
    adapters.init(model)
    model.add_adapter("debias", config="seq_bn")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "adapters" in name:
                p.add_(torch.randn_like(p))
    model.save_adapter(str(tmp_path / "adapter"), "debias")
    plain = metrics.get("regression", backbone=tiny_backbone, device="cpu")
    adapted = metrics.get("regression", backbone=tiny_backbone, device="cpu", adapter=str(tmp_path / "adapter"))
    assert plain.signature != adapted.signature
    assert not np.allclose(plain.score(["a b c"], ["a b d"]), adapted.score(["a b c"], ["a b d"]))
    _, loaded, _ = regression.load(tiny_backbone, "cpu", adapter=str(tmp_path / "adapter"))
    assert str(loaded.encoder.active_adapters) == "Stack[stsb, debias]"


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
    out = tmp_path / "tiny-stsb"
    args = ["train-regression", "--name", "tiny-stsb", "--backbone", str(tiny_bert), "--max-steps", "2",
            "--device", "cpu", "--out", str(out)]
    assert cli.main(args) == 0
    printed = capsys.readouterr().out
    assert "trained tiny-stsb on 4249 STS-B train pairs (2 steps" in printed and "on 1500 pairs" in printed
    assert cli.main(args) == 0
    assert "already trained" in capsys.readouterr().out
    prov = regression.provenance(str(out))
    assert prov["base"] == str(tiny_bert) and prov["train_rows"] == 4249
    assert prov["command"]  # this process's command line (pytest's here)
    assert set(prov["data"]) == set(rm.STSB_FILES)
