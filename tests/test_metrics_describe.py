"""How chapter 3 states its metric settings: the configuration table, the regression note, the layer check."""

import numpy as np
import pandas as pd
import pytest

from metricbias import metrics
from metricbias.metaeval import layers
from metricbias.metrics import Spec, describe, regression


def test_configuration_table_carries_each_signature():
    specs = [Spec.of("bleu"), Spec.of("chrf", label="my chrF")]
    table = describe.configuration_table(specs)
    assert table["metric"].tolist() == ["BLEU", "my chrF"]
    assert table["paradigm"].tolist() == ["n-gram", "n-gram"]
    assert table["signature"].tolist() == [metrics.get("bleu").signature, metrics.get("chrf").signature]


def test_regression_note_states_the_training_recipe(monkeypatch):
    assert describe.regression_note([Spec.of("bleu")]) == ""
    monkeypatch.setitem(regression.RECIPES, "tiny-regressor", regression.RECIPES[next(iter(regression.RECIPES))])
    monkeypatch.setattr(regression, "trained_config", lambda name: {
        "backbone": "base-model", "pooling": "cls", "steps": 100, "batch_size": 8, "train_rows_used": 400,
        "seed": 3, "frozen_layers": 2, "dev_pearson": 0.8123, "dev_rows_used": 50})
    note = describe.regression_note([("Regression", "regression", {"backbone": "tiny-regressor"})])
    assert note == ("* **Regression.** `tiny-regressor`: base-model + cls pooling + a linear head, fine-tuned for "
                    "100 steps of 8 pairs (2.00 passes over the 400 STS-B training pairs; seed 3; the embedding "
                    "layer and the lowest 2 transformer layers frozen to keep CPU training short): Pearson r = "
                    "**0.812** on 50 STS-B dev pairs.")


def test_layer_check_scores_every_layer_on_a_sample(tiny_bert, monkeypatch):
    from metricbias.datasets import stsb

    dev = pd.DataFrame({"sentence1": ["a cat sat", "the dog ran", "a bird sang", "rain fell", "the sun shone"],
                        "sentence2": ["a cat sat down", "a dog runs", "birds sing", "snow fell", "it was sunny"],
                        "score": [4.5, 3.8, 3.0, 1.5, 2.5]})
    monkeypatch.setattr(stsb, "load", lambda split: dev)
    scan = layers.layer_check(str(tiny_bert), pairs=4, seed=0, device="cpu")
    assert scan["layer"].tolist() == [1, 2] and (scan["pairs"] == 4).all()  # the tiny BERT has two layers
    assert np.all(np.abs(scan["pearson"]) <= 1)
    full = layers.layer_check(str(tiny_bert), device="cpu")
    assert (full["pairs"] == 5).all()
