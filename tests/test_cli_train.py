"""`metricbias train NAME`: every recipe's name dispatches to its trainer with the recipe's configuration and the
options given; the old commands are aliases that print a one-line notice and dispatch the same way. The trainers are
replaced by recorders: nothing is trained here."""

from types import SimpleNamespace

import pandas as pd
import pytest

from metricbias import cli
from metricbias.metrics import regression_model
from metricbias.mitigation import training
from metricbias.trained import mlm_head, paraphraser
from metricbias.trained.recipes import RECIPES, recipe_names


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """Record each trainer's arguments instead of training."""
    import metricbias.book.training_data as training_data
    import metricbias.datasets.stsb as stsb
    import metricbias.metrics.regression as regression
    import metricbias.mitigation.cda as cda
    import metricbias.mitigation.evaluation as evaluation

    seen = []
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(stsb, "load", lambda split: pd.DataFrame({"split": [split]}))

    def regression_train(name, config, **kw):
        seen.append(("regression", name, config, kw["out"], kw["device"]))
        return {"train_rows": 1, "steps": 1, "train_seconds": 0, "seconds_per_step": 0, "dev_rows": 1,
                "figures": {"stsb_dev_pearson": 0.5}}

    def parts_train(name, out, *, config, device, command, **chunks):
        seen.append(("parts", name, config, out, device))
        if chunks:
            seen.append(("chunks", chunks))
        return {"steps": 1, "seconds": {"total": 0}, "device": device, "figures": {"loss": 1.0}}

    def adapter_train(config, data, out, *, resume):
        seen.append(("adapter", config, out, resume))
        return SimpleNamespace(meta={"trainable_parameters": 1, "steps_done": 1, "seconds_total": 0,
                                     "seconds_per_step": 0}, out=out)

    monkeypatch.setattr(regression, "train", regression_train)
    monkeypatch.setattr(training_data, "train", parts_train)
    monkeypatch.setattr(training, "train", adapter_train)
    monkeypatch.setattr(evaluation, "held_out_texts", lambda: ())
    monkeypatch.setattr(cda, "build", lambda exclude, limit: SimpleNamespace(
        debias=[0] * 10, kd=[0] * 10, counts=pd.DataFrame({"source": ["toy"], "pairs": [20]})))
    return seen


def test_every_recipe_is_an_artifact_name_and_lists(capsys):
    assert cli.main(["train", "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(RECIPES)
    prefixes = {"regression": "stsb-", "paraphraser": "para-", "mlm_head": "mlm-", "adapter": "debiased-"}
    assert all(name.startswith(prefixes[kind]) for name, (kind, _) in RECIPES.items())


@pytest.mark.parametrize("name", list(RECIPES))
def test_each_name_dispatches_to_its_trainer(name, calls, tmp_path, capsys):
    out = tmp_path / "out"
    kind, options = RECIPES[name]
    force = [] if kind == "adapter" else ["--force"]  # the shipped parts are found under models/
    assert cli.main(["train", name, "--seed", "3", "--device", "cpu", "--out", str(out), *force]) == 0
    call = calls[0]
    assert len(calls) == (2 if kind in ("mlm_head", "paraphraser") else 1)
    if kind == "regression":
        assert call == ("regression", name, regression_model.TrainConfig(**{**options, "seed": 3}), out, "cpu")
    elif kind in ("paraphraser", "mlm_head"):
        module = paraphraser if kind == "paraphraser" else mlm_head
        assert call == ("parts", name, module.Config(**{**options, "seed": 3}), out, "cpu")
    else:
        _, config, where, resume = call
        assert (config.metric, config.backbone, config.lr, config.batch_size, config.seed, config.device) == (
            options["metric"], options["backbone"], options["lr"], options["batch_size"], 3, "cpu")
        assert config.steps == (options.get("steps") or training.default_steps(options["metric"], 20,
                                                                                 options["batch_size"]))
        assert (where, resume) == (out, True)
        assert name.startswith(training.adapter_name(config.metric, config.backbone))
    assert capsys.readouterr().err == ""  # no notice: this is the command


def test_table7_recipes_leave_the_defaults_and_name_their_folder(calls, tmp_path, monkeypatch):
    # the defaults are the recipes named after metric and backbone alone, whatever other recipes follow them
    assert training.DEFAULTS == {"bertscore": {"lr": 1e-3, "batch_size": 32},
                                 "regression": {"lr": 1e-3, "batch_size": 16}}
    assert training.DEFAULT_BACKBONES == {"bertscore": "all-MiniLM-L6-v2", "regression": "stsb-all-MiniLM-L6-v2"}
    for name in ("debiased-bertscore-all-MiniLM-L6-v2-table7", "debiased-regression-stsb-all-MiniLM-L6-v2-table7"):
        metric = RECIPES[name][1]["metric"]
        assert cli.main(["train", name, "--device", "cpu"]) == 0
        _, config, where, _ = calls[-1]
        assert (config.lr, config.batch_size) == (training.PAPER_HPARAMS[metric]["lr"],
                                                  training.PAPER_HPARAMS[metric]["batch_size"])
        assert config.steps == RECIPES[name][1]["steps"] and where.name == name


def test_options_reach_the_trainer(calls, tmp_path):
    assert cli.main(["train", "stsb-all-mpnet-base-v2", "--steps", "7", "--pooling", "cls", "--force",
                     "--out", str(tmp_path)]) == 0
    config = calls[0][2]
    assert (config.max_steps, config.pooling, config.epochs, config.backbone) == (7, "cls", 2, "all-mpnet-base-v2")
    assert cli.main(["train", "mlm-all-MiniLM-L6-v2", "--epochs", "2", "--batch-size", "8",
                     "--out", str(tmp_path), "--force"]) == 0
    assert (calls[1][2].epochs, calls[1][2].batch_size, calls[1][2].max_extra) == (2, 8, 16000)


def test_a_recipe_refuses_another_trainers_option(calls, capsys):
    assert cli.main(["train", "para-all-MiniLM-L6-v2", "--pooling", "cls"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("metricbias train: error: para-all-MiniLM-L6-v2 (UniLM paraphraser) takes no --pooling")
    assert "\n" not in err and calls == []


def test_an_unknown_name_is_one_line_listing_the_names(capsys):
    assert cli.main(["train", "para-nothing"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'para-nothing'" in err
    assert all(name in err for name in recipe_names())


@pytest.mark.parametrize("old, new", [
    (["train-regression", "--name", "stsb-all-mpnet-base-v2", "--max-steps", "4", "--seed", "1", "--force"],
     ["train", "stsb-all-mpnet-base-v2", "--steps", "4", "--seed", "1", "--force"]),
    (["adapters", "train", "--metric", "regression", "--steps", "5", "--lr", "0.01", "--seed", "2"],
     ["train", "debiased-regression-stsb-all-MiniLM-L6-v2", "--steps", "5", "--lr", "0.01", "--seed", "2"]),
])
def test_the_old_commands_notice_and_dispatch_the_same(old, new, calls, tmp_path, capsys):
    out = ["--out", str(tmp_path / "out")]
    assert cli.main(old + out) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"this is now `metricbias {' '.join(new[:2])}`" in err[0]
    assert cli.main(new + out) == 0
    assert capsys.readouterr().err == ""
    assert len(calls) == 2 and calls[0] == calls[1]


@pytest.mark.parametrize("name", ["mlm-all-mpnet-base-v2", "para-all-mpnet-base-v2"])
def test_heads_and_paraphrasers_run_in_chunks_from_their_run_folder(name, calls, tmp_path, capsys):
    """mlm-*, para-*: the run folder (checkpoints; a head's cached features) defaults to <cache>/trained/NAME.run;
    --stop-after and --fresh reach the trainer; --resume without a checkpoint is an error."""
    assert cli.main(["train", name, "--force", "--stop-after", "5", "--fresh"]) == 0
    (_, chunks), = [c for c in calls if c[0] == "chunks"]
    assert chunks == {"run_dir": tmp_path / "cache" / "trained" / f"{name}.run", "resume": False, "stop_after": 5}
    assert cli.main(["train", name, "--force", "--resume", "--run-dir", str(tmp_path / "x")]) == 2
    assert "--resume, but" in capsys.readouterr().err
    assert cli.main(["train", "stsb-all-MiniLM-L6-v2", "--stop-after", "5"]) == 2
    assert "takes no --stop-after" in capsys.readouterr().err
