"""How chapter 3 states its metric settings: the configuration table, the regression note, the layer check."""

import numpy as np
import pandas as pd
import pytest

from metricbias import metrics
from metricbias.book.reproduction import ch3_configurations
from metricbias.metaeval import layers
from metricbias.metrics import Spec, regression


def test_configuration_table_carries_each_signature():
    specs = [Spec.of("bleu"), Spec.of("chrf", label="my chrF")]
    table = ch3_configurations.configuration_table(specs)
    assert table["metric"].tolist() == ["BLEU", "my chrF"]
    assert table["paradigm"].tolist() == ["n-gram", "n-gram"]
    assert table["signature"].tolist() == [metrics.get("bleu").signature, metrics.get("chrf").signature]


def test_regression_model_states_the_shipped_model():
    assert ch3_configurations.regression_model([Spec.of("bleu")]).empty
    prov = regression.provenance("stsb-all-MiniLM-L6-v2")
    row = ch3_configurations.regression_model([Spec.of("regression", backbone="stsb-all-MiniLM-L6-v2")]).iloc[0]
    assert (row["model"], row["where"], row["frozen base"]) == ("stsb-all-MiniLM-L6-v2", "models/", "all-MiniLM-L6-v2")
    assert (row["steps"], row["batch"]) == (prov["steps"], prov["batch_size"])
    assert row["Pearson r (STS-B dev)"] == prov["figures"]["stsb_dev_pearson"] >= 0.83


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
