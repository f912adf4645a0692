"""Paraphrasers in chunks (issue 42): checkpoints of the trained tensors, optimizer, scheduler and log in shards under
the file limit, and a run stopped and resumed (twice) ending with the tensors and figures of an uninterrupted one."""

import pandas as pd
import pytest
import torch
from tiny_models import CORPUS, save_tiny_mpnet

from metricbias.trained import checkpoint, paraphraser, parts

EXAMPLES = pd.DataFrame({"text": CORPUS + CORPUS[::-1], "target": CORPUS[1:] + CORPUS[:1] + CORPUS,
                         "pair": [f"p{i}" for i in range(2 * len(CORPUS))]})
LIMIT = 200 * 1024  # bytes per checkpoint shard here: the tiny head's output bias and its two moments need two


@pytest.fixture(scope="module")
def tiny_mpnet(tmp_path_factory):
    return save_tiny_mpnet(tmp_path_factory.mktemp("tiny-mpnet"))


def _train(config, out, **kw):
    return paraphraser.train(config, out, name="para-tiny", examples=EXAMPLES, validation=EXAMPLES.head(2),
                             device="cpu", progress=False, **kw)


@pytest.mark.parametrize("autocast", ["", "bfloat16"])
def test_a_resumed_paraphraser_run_gives_the_weights_of_an_uninterrupted_one(tiny_mpnet, tmp_path, monkeypatch,
                                                                              autocast):
    monkeypatch.setattr(parts, "MAX_FILE_BYTES", LIMIT)
    # adapters in every layer and [MASK] twins, as the recipes; 9 steps of 3 = 3 epochs of the 10 - 2 pairs (drop_last)
    config = paraphraser.Config(base=str(tiny_mpnet), adapter_layers=2, reduction_factor=4, steps=9, batch_size=3,
                                lr=3e-2, eval_every=4, checkpoint_every=3, autocast=autocast)
    whole = _train(config, tmp_path / "whole")
    run = tmp_path / "parts.run"
    assert _train(config, tmp_path / "parts", run_dir=run, stop_after=4) is None
    assert not (tmp_path / "parts").exists()
    assert [p.name for p in checkpoint.checkpoints(run)] == ["step-000003", "step-000004"]
    shards = sorted((run / "checkpoints" / "step-000004").glob("tensors-*.safetensors"))
    assert len(shards) >= 2 and all(s.stat().st_size <= LIMIT for s in shards)
    assert _train(config, tmp_path / "parts", run_dir=run, stop_after=3) is None  # a second session, to step 7
    done = _train(config, tmp_path / "parts", run_dir=run)
    a, b = parts.load(tmp_path / "whole")[0], parts.load(tmp_path / "parts")[0]
    assert set(a) == set(b) and any(".adapters." in k for k in a)
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0)
    assert done["resumed_at_step"] == 7 and whole["resumed_at_step"] is None
    for key in ("first_loss", "final_train_loss", "validation_log_likelihood", "log"):
        assert done["figures"][key] == whole["figures"][key]
    assert [r["step"] for r in done["figures"]["log"]] == [4, 8, 9]
    assert done["config"]["autocast"] == autocast


def test_a_changed_configuration_refuses_the_checkpoints_and_fresh_starts_again(tiny_mpnet, tmp_path):
    config = paraphraser.Config(base=str(tiny_mpnet), adapter_layers=2, steps=4, batch_size=3, checkpoint_every=2)
    run = tmp_path / "run"
    _train(config, tmp_path / "a", run_dir=run, stop_after=2)
    other = paraphraser.Config(**{**config.__dict__, "lr": 5e-3})
    with pytest.raises(parts.PartsError, match="another configuration"):
        _train(other, tmp_path / "a", run_dir=run)
    with pytest.raises(ValueError, match="needs a run_dir"):
        _train(config, tmp_path / "b", stop_after=2)
    done = _train(other, tmp_path / "a", run_dir=run, resume=False)
    assert done["resumed_at_step"] is None and done["steps"] == 4
    assert [p.name for p in checkpoint.checkpoints(run)] == ["step-000002", "step-000004"]
