"""Debiasing adapters: differentiable metrics, losses, training, checkpoints, save/load (tiny models, CPU)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metricbias.book.reproduction import ch6_table5, zarkadoula2023
from metricbias.metrics.base import Metric

torch = pytest.importorskip("torch")

from metricbias import metrics, provenance  # noqa: E402
from metricbias.mitigation import training  # noqa: E402
from metricbias.mitigation.cda import CDAData  # noqa: E402
from metricbias.mitigation.differentiable import BERTScoreF, truncate_encoder  # noqa: E402

CANDS = ["He is a doctor.", "The nurse helped her patient.", "A man plays the flute in the park."]
REFS = ["The person is a doctor.", "The nurse helped the patient.", "Someone plays a flute."]


@pytest.fixture(scope="module")
def tiny_regression(tiny_bert, tmp_path_factory):
    """The project's regression metric (frozen tiny BERT + task adapter + head), trained 2 steps: its folder."""
    from metricbias.metrics import regression, regression_model

    pairs = pd.DataFrame({"sentence1": ["A man sings.", "A cat sleeps.", "It rains."],
                          "sentence2": ["A man is singing.", "A dog barks.", "The sun shines."],
                          "score": [4.5, 0.5, 1.0]})
    config = regression_model.TrainConfig(backbone=str(tiny_bert), adapter="seq_bn[reduction_factor=4]", max_steps=2,
                                          batch_size=3, learning_rate=1e-3)
    out = tmp_path_factory.mktemp("regression") / "tiny-sts"
    regression.train("tiny-sts", config, out=out, device="cpu", progress=False, train_data=pairs, dev_data=pairs)
    return out


def toy_data() -> CDAData:
    debias = pd.DataFrame({
        "source": "toy", "pair_id": ["a", "b", "c", "d"], "kind": "self",
        "c1": ["He is a doctor.", "His car is red.", "The man sings.", "She saw him."],
        "c2": ["She is a doctor.", "Her car is red.", "The woman sings.", "He saw her."],
        "r": ["The person is a doctor.", "The person's car is red.", "The person sings.", "The person saw the person."],
    })
    kd = pd.DataFrame({"source": "toy", "pair_id": ["e", "f", "g", "h"],
                       "candidate": ["A plane is taking off.", "A cat sleeps.", "Stocks fell.", "It rains."],
                       "reference": ["An air plane is taking off.", "A dog barks.", "Shares dropped.", "Rain falls."]})
    return CDAData(debias, kd, pd.DataFrame([{"source": "toy", "debias_triples": 4, "kd_pairs": 4}]))


def test_losses_on_a_toy_batch():
    s1, s2 = torch.tensor([0.9, 0.5, 0.2]), torch.tensor([0.7, 0.5, 0.5])
    # Eq. 4: ((0.2)^2 + 0 + (0.3)^2) / 3
    assert training.debias_loss(s1, s2).item() == pytest.approx((0.04 + 0.09) / 3)
    # Eq. 5: ((1.0 - 1.5)^2 + (2.0 - 2.0)^2) / 2
    assert training.kd_loss(torch.tensor([1.5, 2.0]), torch.tensor([1.0, 2.0])).item() == pytest.approx(0.125)


def test_paper_epochs_and_default_steps():
    assert training.paper_epochs("bertscore") == 6.0  # 150k steps x 32 / 800k
    assert training.paper_epochs("regression") == 6.0  # 300k steps x 16 / 800k
    assert training.default_steps("bertscore", 13_000) == math.ceil(6 * 13_000 / 32)
    assert training.default_steps("regression", 13_000, batch_size=32) == math.ceil(6 * 13_000 / 32)


@pytest.mark.parametrize("idf", [False, True])
def test_differentiable_bertscore_equals_bert_score_package(tiny_bert, idf):
    from bert_score import BERTScorer
    from bert_score.utils import get_tokenizer
    from transformers import AutoModel

    path = str(tiny_bert)
    scorer = BERTScorer(model_type=path, num_layers=1, idf=idf, idf_sents=REFS if idf else None, device="cpu")
    _, _, expected = scorer.score(CANDS, REFS)
    model = truncate_encoder(AutoModel.from_pretrained(path), 1).eval()
    ours = BERTScoreF(model, get_tokenizer(path, use_fast=False), idf_dict=scorer._idf_dict if idf else None)
    got = ours(CANDS, REFS)
    assert got.requires_grad
    np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), rtol=0, atol=1e-6)


def test_stream_indices_cover_each_epoch_once():
    seen = np.concatenate([training.stream_indices(10, step, 4, seed=3, stream=0) for step in range(5)])
    assert sorted(seen[:10]) == list(range(10)) and sorted(seen[10:20]) == list(range(10))
    assert list(training.stream_indices(10, 2, 4, 3, 0)) == list(training.stream_indices(10, 2, 4, 3, 0))


def _config(path, **kw):
    base = dict(metric="bertscore", backbone=str(path), steps=5, lr=2e-2, batch_size=8, seed=0, layer=1,
                log_every=1, checkpoint_every=2, validation_fraction=0.0)
    return training.TrainConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def trained(tiny_bert, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "adapter"
    return training.train(_config(tiny_bert), toy_data(), out, progress=False)


def test_five_steps_decrease_the_debiasing_loss(trained):
    log = trained.log[trained.log["split"] == "train"].set_index("step")
    assert list(log.index) == [1, 2, 3, 4, 5]
    losses = log["debias_loss"].to_numpy()
    assert np.all(np.diff(losses) < 0), losses  # every step lowers it (the batch is the whole toy set)
    assert losses[-1] < 0.9 * losses[0]
    assert trained.meta["steps_done"] == 5 and trained.meta["seconds_per_step"] > 0
    # layer 1 is matched: one adapter (layer 0; layer 1 is left out), bottleneck 32 / 16 = 2
    assert trained.meta["trainable_parameters"] == 32 * 2 + 2 + 2 * 32 + 32
    assert trained.meta["layer"] == 1 and trained.meta["num_layers_with_adapter"] == 1
    assert [s for s, _ in training.checkpoints(trained.out)] == [2, 4, 5]


def test_only_the_adapter_changes(trained, tiny_bert):
    from transformers import AutoModel

    original = AutoModel.from_pretrained(str(tiny_bert)).state_dict()
    for name, value in trained.scorer.model.state_dict().items():
        if "adapters" not in name and "prompt_tuning" not in name:
            assert torch.equal(value, original[name]), name


def test_save_load_round_trip_gives_identical_scores(trained):
    loaded = training.load_scorer(trained.out)
    with torch.no_grad():
        a, b = trained.scorer(CANDS, REFS), loaded(CANDS, REFS)
        assert torch.equal(a, b)
        plain = training.load_target("bertscore", trained.meta["backbone"], layer=1)
        assert not torch.allclose(plain(CANDS, REFS), a)  # and the adapter does change the scores


def test_project_metric_with_the_adapter_gives_the_trained_scores(trained):
    m = metrics.get("bertscore", backbone=trained.meta["backbone"], layer=1, adapter=str(trained.out), device="cpu")
    with torch.no_grad():
        want = trained.scorer(CANDS, REFS).double().numpy()
    np.testing.assert_allclose(m.score(CANDS, REFS), want, rtol=0, atol=1e-6)
    plain = metrics.get("bertscore", backbone=trained.meta["backbone"], layer=1, device="cpu")
    assert plain.signature != m.signature


def test_resume_continues_exactly_and_runs_are_deterministic(trained, tmp_path):
    interrupted = tmp_path / "interrupted"
    shutil.copytree(trained.out, interrupted)
    for step in (4, 5):
        shutil.rmtree(interrupted / "checkpoints" / f"step-{step:06d}")
    (interrupted / "adapter_config.json").unlink()
    resumed = training.train(_config(trained.meta["backbone"]), toy_data(), interrupted, progress=False)
    pd.testing.assert_frame_equal(resumed.log.drop(columns="elapsed_s"), trained.log.drop(columns="elapsed_s"))
    for (name, a), b in zip(trained.scorer.model.state_dict().items(), resumed.scorer.model.state_dict().values()):
        assert torch.equal(a, b), name
    with pytest.raises(ValueError, match="another configuration"):
        training.train(_config(trained.meta["backbone"], lr=1e-3), toy_data(), interrupted, progress=False)


def test_regression_adapter_round_trip(tiny_regression, tmp_path):
    """The debiasing adapter stacks on the regression backbone's task adapter; backbone and task adapter stay frozen."""
    from metricbias.metrics import regression

    cfg = _config(tiny_regression, metric="regression", layer=None, steps=2, checkpoint_every=0)
    result = training.train(cfg, toy_data(), tmp_path / "reg", progress=False)
    assert result.meta["num_layers_with_adapter"] == 2 and result.meta["layer"] is None
    host = result.scorer.host
    assert str(host.active_adapters) == "Stack[stsb, debias]"
    assert {n.split(".adapters.")[1].split(".")[0] for n, p in host.named_parameters() if p.requires_grad} == {"debias"}
    _, before, _ = regression.load(str(tiny_regression), "cpu")
    frozen = {k: v for k, v in before.state_dict().items()}
    for name, value in result.scorer.model.state_dict().items():
        if ".debias." not in name:  # the backbone, the task adapter and the head are unchanged
            assert torch.equal(value, frozen[name]), name
    loaded = training.load_scorer(tmp_path / "reg")
    with torch.no_grad():
        trained_scores = result.scorer(CANDS, REFS)
        assert torch.equal(trained_scores, loaded(CANDS, REFS))
    m = metrics.get("regression", backbone=str(tiny_regression), adapter=str(tmp_path / "reg"), device="cpu")
    np.testing.assert_allclose(m.score(CANDS, REFS), trained_scores.double().numpy(), rtol=0, atol=1e-6)
    prov = provenance.read(tmp_path / "reg")
    assert prov["kind"] == "debiasing adapter" and prov["steps"] == 2 and len(prov["check"]["scores"]) == 16


def test_ship_find_by_name_and_record(trained, tmp_path, monkeypatch):
    """A run shipped without its checkpoints scores the same (same adapter fingerprint), is found by name, and keeps
    the figures recorded in its provenance."""
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    backbone = trained.meta["backbone"]
    name = training.adapter_name("bertscore", backbone)
    assert name == f"debiased-bertscore-{Path(backbone).name}"
    with pytest.raises(FileNotFoundError, match="train one with `metricbias adapters train --metric bertscore"):
        training.shipped("bertscore", backbone)
    dest = training.ship(trained.out, dest=training.default_out("bertscore", backbone))
    assert dest == tmp_path / "cache" / "trained" / name
    assert sorted(p.name for p in dest.iterdir()) == sorted(training.SHIPPED_FILES)
    found = training.shipped("bertscore", backbone)
    assert found.folder == dest and found.provenance["name"] == name and found.provenance["steps"] == 5
    assert set(found.provenance["files"]) == set(training.SHIPPED_FILES) - {"provenance.json"}
    by_name = metrics.get("bertscore", backbone=backbone, layer=1, adapter=name, device="cpu")
    by_run = metrics.get("bertscore", backbone=backbone, layer=1, adapter=str(trained.out), device="cpu")
    assert by_name.signature == by_run.signature  # checkpoints and provenance are not the adapter
    np.testing.assert_allclose(by_name.score(*training.reload_check_pairs()), found.provenance["check"]["scores"],
                               rtol=0, atol=1e-6)
    table = pd.DataFrame({"kind": ["bias"], "dataset": ["published"], "name": ["gender"], "before": [2.0],
                          "after": [1.0], "p_value": [np.nan]})
    curve = pd.DataFrame({"step": [0, 5], "value": [2.0, 1.0]})
    training.record_evaluation(dest, table, table.assign(met=True), curve=curve, command="metricbias adapters evaluate")
    again = training.shipped("bertscore", backbone)
    assert again.provenance["figures"]["command"] == "metricbias adapters evaluate"
    pd.testing.assert_frame_equal(again.evaluation(), table)
    pd.testing.assert_frame_equal(again.curve(), curve)
    assert metrics.get("bertscore", backbone=backbone, layer=1, adapter=name).signature == by_run.signature
    # evaluated again without the run's checkpoints: the new table, the curve recorded with them and its command
    training.record_evaluation(dest, table.assign(after=1.5), table.assign(met=True), command="evaluate again")
    third = training.shipped("bertscore", backbone)
    assert third.evaluation()["after"].tolist() == [1.5] and third.provenance["figures"]["command"] == "evaluate again"
    pd.testing.assert_frame_equal(third.curve(), curve)
    assert third.provenance["figures"]["curve_command"] == "metricbias adapters evaluate"


@pytest.mark.parametrize("suffix", ["", "-table7"])
@pytest.mark.parametrize("metric", ["bertscore", "regression"])
def test_shipped_adapters_load_and_score_as_recorded(metric, suffix):
    """models/debiased-*: found by name, trained on the shipped backbone, and the loaded adapter gives the scores
    the trained one recorded before it was saved; the figures of `adapters evaluate --record` are there."""
    found = training.shipped(metric, training.DEFAULT_BACKBONES[metric], suffix)
    assert found.folder.parent.name == "models" and found.provenance["metric"] == metric
    for f, size in found.provenance["files"].items():
        assert size <= 8 * 2**20 and (found.folder / f).stat().st_size == size
    recorded = found.provenance["check"]["scores"]  # by the differentiable metric that trained it (GPU or CPU)
    with torch.no_grad():
        loaded = training.load_scorer(found.folder, device="cpu")(*training.reload_check_pairs()).double().numpy()
    np.testing.assert_allclose(loaded, recorded, rtol=0, atol=1e-5)
    options = {"layer": found.meta["layer"]} if metric == "bertscore" else {}
    m = metrics.get(metric, backbone=found.meta["metric_backbone"], adapter=found.name, device="cpu", **options)
    # the differentiable metric that trained it batches the check pairs together, and bert-score's greedy match (which
    # it follows) zeroes padded positions; the registry metric leaves padding out (matching.greedy_match), so it
    # equals the trained scorer run one pair at a time, with nothing padded
    with torch.no_grad():
        scorer = training.load_scorer(found.folder, device="cpu")
        alone = np.array([float(scorer([c], [r])[0]) for c, r in zip(*training.reload_check_pairs())])
    np.testing.assert_allclose(m.score(*training.reload_check_pairs()), alone, rtol=0, atol=1e-5)
    criteria = pd.DataFrame(found.provenance["figures"]["criteria"])
    assert {"gender bias cut on the published gender set", "gender bias cut on the built gender set",
            "quality change on stsb-dev (pearson)"} <= set(criteria["criterion"])


def test_bleurt_style_checkpoint_adapter(tiny_bert_regressor, tmp_path):
    cfg = _config(tiny_bert_regressor, metric="regression", layer=None, steps=1, checkpoint_every=0)
    result = training.train(cfg, toy_data(), tmp_path / "bleurt", progress=False)
    m = metrics.get("regression", backbone=str(tiny_bert_regressor), adapter=str(tmp_path / "bleurt"), device="cpu")
    with torch.no_grad():
        want = result.scorer(CANDS, REFS).double().numpy()
    np.testing.assert_allclose(m.score(CANDS, REFS), want, rtol=0, atol=1e-6)


def test_not_an_adapter_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a trained adapter folder"):
        training.read_meta(tmp_path)


def _compare_table():
    from metricbias.mitigation import evaluation

    rows = [("bias", "published", "gender", 10.0, 3.0), ("bias", "built", "gender", 8.0, 4.0),
            ("bias", "published", "race", 5.0, 5.6), ("bias", "built", "age", 4.0, 4.2),
            ("quality", "stsb-dev", evaluation.QUALITY["stsb-dev"], 0.800, 0.796),
            ("quality", "realsumm", evaluation.QUALITY["realsumm"], 0.500, 0.490)]
    t = pd.DataFrame(rows, columns=["kind", "dataset", "name", "before", "after"])
    t["statistic"] = ["bias (Eq. 2)"] * 4 + ["pearson", "spearman"]
    t["change"] = t["after"] - t["before"]
    t["relative_change"] = t["change"] / t["before"].abs()
    t["n"] = 10
    return t


def test_target_criteria_on_a_hand_made_table():
    from metricbias.mitigation import evaluation

    c = evaluation.target(_compare_table()).set_index("criterion")
    assert c.loc["gender bias cut on the published gender set", "value"] == pytest.approx(0.7)
    assert c.loc["gender bias cut on the published gender set", "met"]
    assert c.loc["gender bias cut on the built gender set", "value"] == pytest.approx(0.5)
    assert not c.loc["gender bias cut on the built gender set", "met"]  # 50% < 60%
    assert c.loc["quality change on stsb-dev (pearson)", "met"]  # -0.5%
    assert not c.loc["quality change on realsumm (spearman)", "met"]  # -2%
    assert not c.loc["bias change on published race", "met"]  # +12%
    assert c.loc["bias change on built age", "met"]  # +5%
    assert len(c) == 6
    assert c.loc["bias change on published race", ["dataset", "name", "before", "after"]].tolist() == [
        "published", "race", 5.0, 5.6]  # each criterion keeps the row it judges


class _PrefersHe(Metric):
    """Toy metric: a base score from the pair's number, plus ``gap`` when the candidate says *he*."""

    name = "toy_prefers_he"
    family = "user"
    defaults = {"gap": 0.0}

    def __init__(self, gap):
        super().__init__(gap=gap)

    def _score(self, candidates, references):
        gap = self.options["gap"]
        return np.array([int(c.split()[-1]) / 10 + (gap if c.split()[0] == "he" else 0.0) for c in candidates])


def test_bias_change_tests_on_a_toy_metric():
    from metricbias.mitigation import evaluation

    n = 20
    pairs = pd.DataFrame({"dataset": "published", "attribute": "gender", "pair_id": [str(i) for i in range(n)],
                          "candidate_1": [f"he is a nurse {i}" for i in range(n)],
                          "candidate_2": [f"she is a nurse {i}" for i in range(n)],
                          "reference_1": [f"the person is a nurse {i}" for i in range(n)]})
    pairs["reference_2"] = pairs["reference_1"]
    same = evaluation.bias_change_tests(_PrefersHe(0.5), _PrefersHe(0.5), pairs, n_resamples=199)
    assert same["p_value"].tolist() == [1.0]  # identical per-pair terms
    fair = evaluation.bias_change_tests(_PrefersHe(0.5), _PrefersHe(0.0), pairs, n_resamples=999)
    assert fair["p_value"].iloc[0] < 0.01  # every pair's term drops from 0.5/2.4 to 0


def test_table5_cells():
    from metricbias.mitigation import evaluation

    t5 = ch6_table5.table5(_compare_table().assign(metric="BERTScore", backbone="tiny"))
    adapter = t5[t5["variant"] == "+ adapter"].iloc[0]
    assert adapter["gender bias (published)"] == "3.00 (-70.0%)"
    assert adapter["stsb-dev"] == "0.796 (-0.5%)"
    assert t5[t5["variant"] == "original"].iloc[0]["gender bias (built)"] == "8.00"


def test_published_tables_relative_changes():
    from metricbias.mitigation import evaluation

    t = zarkadoula2023.published_tables()
    row = t[(t["source"].str.startswith("Sun")) & (t["backbone"] == "BERT-base") & (t["metric"] == "BERTScore")
            & (t["variant"] != "original")].iloc[0]
    assert row["gender_bias_change"] == pytest.approx(4.21 / 8.73 - 1)  # the paper prints -52%
    assert round(row["gender_bias_change"], 2) == -0.52


def test_cli_train_then_evaluate(tiny_bert, tmp_path, capsys):
    from metricbias import cli

    out = tmp_path / "adapter"
    assert cli.main(["adapters", "train", "--metric", "bertscore", "--backbone", str(tiny_bert), "--steps", "2",
                     "--batch-size", "4", "--lr", "1e-3", "--cda-limit", "60", "--device", "cpu", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "total (deduplicated)" in printed and "trained" in printed
    meta = training.read_meta(out)
    assert meta["steps_done"] == 2 and meta["train_config"]["lr"] == 1e-3 and meta["layer"] == 2
    assert {r["source"] for r in meta["data_counts"]} == {"stsb", "mrpc", "stereoset", "total (deduplicated)"}
    csv = tmp_path / "eval.csv"
    assert cli.main(["adapters", "evaluate", "--adapter", str(out), "--sample-size", "6", "--quality-sample-size",
                     "3", "--device", "cpu", "--no-cache", "--out", str(csv), "--record"]) == 0
    table = pd.read_csv(csv)
    from metricbias.mitigation import evaluation

    assert list(table.columns) == evaluation.COMPARE_COLUMNS
    assert table.loc[table["kind"] == "quality", "p_value"].isna().all()
    assert table.loc[table["kind"] == "bias", "p_value"].dropna().between(0, 1).all()
    assert set(table.loc[table["kind"] == "quality", "dataset"]) == set(evaluation.QUALITY)
    gender = table[(table["kind"] == "bias") & (table["name"] == "gender")]
    assert set(gender["dataset"]) == {"published", "built"} and (gender["n"] == 6).all()
    assert "stereoset_gender" not in set(table["name"])  # training data, not evaluated
    printed = capsys.readouterr().out
    assert "gender bias cut on the published gender set" in printed and "recorded the figures and the" in printed
    figures = provenance.read(out)["figures"]
    assert len(figures["evaluation"]) == len(table) and figures["command"]
    assert sorted({r["step"] for r in figures["curve"]}) == [0, 1, 2]  # the original metric and both checkpoints
