"""The one scoring path: pair layout, dataset registry, score_pairs, profiles' suites, the `score` / `bias --scores
live` / `metrics` commands."""

import numpy as np
import pandas as pd
import pytest

from metricbias import backbones, cli, datasets, metrics, profiles, scoring
from metricbias.bias.pairwise import BIAS_COLUMNS
from metricbias.book import chapter_profiles
from metricbias.book.reproduction import notes
from metricbias.cache import ScoreCache
from metricbias.datasets import published
from metricbias.metrics.base import Metric

PAIRS = pd.DataFrame({
    "attribute": ["a", "a", "b"],
    "pair_id": ["a-0", "a-1", "b-0"],
    "candidate_1": ["x y", "x z", "p q"],
    "candidate_2": ["x w", "x v", "p r"],
    "reference_1": ["x y z", "x y z", "p q r"],
    "reference_2": ["x y z", "x y z", "p q r"],
})


class Calls(Metric):
    """Toy metric: number of pairs in the call (shows how calls are grouped)."""

    name = "toy_calls"
    family = "ngram"
    corpus_dependent = True

    def _score(self, candidates, references):
        return np.full(len(candidates), float(len(candidates)))


class Overlap(Metric):
    name = "toy_overlap"
    family = "ngram"

    def _score(self, candidates, references):
        return np.array([len(set(c.split()) & set(r.split())) for c, r in zip(candidates, references)], float)


def test_score_pairs_columns_order_and_corpus_grouping(tmp_path):
    out = scoring.score_pairs(PAIRS, Overlap(), cache=ScoreCache(tmp_path / "c.sqlite"))
    assert list(out.columns) == scoring.SCORE_COLUMNS + ["group_1", "group_2"]
    assert (out["metric"] == "toy_overlap").all() and (out["dataset"] == "pairs").all()
    assert out["pair_id"].tolist() == ["a-0", "a-1", "b-0"]
    assert out["score_1"].tolist() == [2.0, 2.0, 2.0] and out["score_2"].tolist() == [1.0, 1.0, 2.0]
    assert (out["signature"] == Overlap().signature).all()
    grouped = scoring.score_pairs(PAIRS, Calls(), cache=None)  # corpus = one attribute's 2N rows
    assert grouped["score_1"].tolist() == [4.0, 4.0, 2.0]
    # sides standing for the same item are one text of the corpus (counterfactual sets)
    items = PAIRS.assign(item_1=["i", "j", "k"], item_2=["j", "i", "l"])
    assert scoring.score_pairs(items, Calls(), cache=None)["score_1"].tolist() == [2.0, 2.0, 2.0]


def test_any_texts_go_through_the_scoring_path_and_its_cache(tmp_path):
    """score_texts (one metric call) and score_jobs (several) read and fill the score cache as score_pairs does,
    on the current executor, and a chapter's job log counts their scores."""
    from metricbias import jobs

    cache = ScoreCache(tmp_path / "c.sqlite")
    with jobs.collect() as ran:
        first = scoring.score_texts(Overlap(), ["x y", "p"], ["x y z", "p q"], cache=cache, what="example")
    assert first.tolist() == [2.0, 1.0] and [(j.what, j.computed, j.cached) for j in ran] == [("example", 2, 0)]
    with jobs.collect() as ran:
        again, = scoring.score_jobs([scoring.Job(Overlap(), ["x y", "p"], ["x y z", "p q"])], cache=cache)
    assert again.scores.tolist() == [2.0, 1.0] and (again.computed, again.cached) == (0, 2)
    assert scoring.score_texts(Overlap(), [], [], cache=None).shape == (0,)


def test_reference_2_is_used_for_candidate_2():
    pairs = PAIRS.assign(reference_2=["x w", "x v", "p r"])
    out = scoring.score_pairs(pairs, Overlap(), cache=None)
    assert out["score_2"].tolist() == [2.0, 2.0, 2.0]


def test_sampling_and_bad_tables():
    many = pd.concat([PAIRS.assign(pair_id=PAIRS["pair_id"] + f"-{i}") for i in range(5)], ignore_index=True)
    sample = datasets.sample(many.assign(dataset="d"), 3, seed=1)
    assert sample.groupby("attribute").size().to_dict() == {"a": 3, "b": 3}
    assert sample.equals(datasets.sample(many.assign(dataset="d"), 3, seed=1))
    with pytest.raises(ValueError, match="missing column"):
        scoring.score_pairs(PAIRS.drop(columns="reference_1"), Overlap(), cache=None)
    with pytest.raises(ValueError, match="pair_id 'a-0' appears more than once"):
        scoring.score_pairs(pd.concat([PAIRS, PAIRS]), Overlap(), cache=None)
    with pytest.raises(ValueError, match="unknown dataset 'mine'"):
        datasets.load("mine")


def test_every_registered_dataset_loads_in_the_pair_layout():
    for name in ("published", "built", "matched", "adapter-evaluation"):
        pairs = datasets.load(name, ["gender"])
        assert list(pairs.columns[:len(datasets.PAIR_COLUMNS)]) == datasets.PAIR_COLUMNS
        assert (pairs["attribute"] == "gender").all() and len(pairs) > 0
    assert set(datasets.load("adapter-evaluation", ["gender"])["dataset"]) == {"published", "built"}
    assert "stereoset_gender" not in datasets.attributes("adapter-evaluation")
    matched = datasets.load("matched", ["gender"])
    assert set(matched["dataset"]) == {"built", "released"}
    cf = datasets.load("counterfactual", ["gender"], sample_size=3, seed=0)
    assert cf["source"].nunique() == 3 and set(cf["group_1"]) >= {"female", "male", "original", "neutral"}


def test_metrics_on_backbones_for_live_bias(tiny_bert):
    entries = metrics.on_backbones(["bleu", "bertscore", "moverscore"], ["all-MiniLM-L6-v2", str(tiny_bert)])
    assert [e[0] for e in entries] == ["bleu", "bertscore@all-MiniLM-L6-v2", f"bertscore@{tiny_bert}",
                                       "moverscore@all-MiniLM-L6-v2", f"moverscore@{tiny_bert}"]
    assert metrics.on_backbones(["bertscore"]) == [("bertscore", "bertscore", {})]
    with pytest.raises(ValueError, match="metric bartscore takes seq2seq backbones; none of all-MiniLM-L6-v2"):
        metrics.on_backbones(["bartscore"], ["all-MiniLM-L6-v2"])


def test_suites_name_registered_metrics_with_unique_labels():
    for profile in ("offline", "smoke", "paper"):
        entries = profiles.suite(profile)
        labels = [e[0] for e in entries]
        assert len(labels) == len(set(labels))
        assert {e[1] for e in entries} <= set(metrics.names())
    offline = profiles.suite("offline")
    assert {"BLEU", "WMD", "BERTScore-MiniLM", "MoverScore-MiniLM", "MoverScore-MiniLM-2gram",
            "Regression-MiniLM"} <= {e[0] for e in offline}
    here = set(backbones.available())
    paraphrasers = {b for b in ("para-all-MiniLM-L6-v2", "para-all-mpnet-base-v2") if b in here}
    # generation metrics run offline exactly on the UniLM paraphrasers trained here (no hub seq2seq model)
    assert {e[2]["backbone"] for e in offline if e[1] in ("bartscore", "prism")} == paraphrasers
    assert "frugalscore" not in {e[1] for e in offline}
    paper = {e[0] for e in profiles.suite("paper")}
    released = {m for m in published.METRICS if not m.startswith(("ROUGE", "METEOR"))} - {"BLEU", "NIST", "chrF"}
    assert released <= paper  # every released PLM column has its live configuration


def test_a_chapter_can_leave_metrics_out_of_the_suite_and_says_so():
    from metricbias.book.reproduction import ch5_table3, ch7_gender_swap

    full = profiles.suite("paper")
    kept = profiles.suite("paper", "bartscore, prism")
    assert kept == [e for e in full if e.name not in ("bartscore", "prism")] and len(kept) < len(full)
    note = notes.left_out_note("paper", "prism")
    assert all(e.label in note for e in full if e.name == "prism") and "-p skip_metrics=''" in note
    assert notes.left_out_note("paper", "") == "" == notes.left_out_note("paper", "no_such_metric")
    assert notes.left_out_note("paper", "prism", metric_names="bleu,chrf") == ""  # named metrics, not the suite
    assert list(ch5_table3.metric_suite("bleu,chrf,ter", skip_metrics="chrf")) == ["BLEU", "TER"]
    assert [label for label, _ in ch7_gender_swap.meta_eval_metrics("smoke", "bleu,ter", "ter")] == ["bleu"]
    by_backbone = profiles.suite("paper", "roberta-large")
    assert by_backbone and all(e.options.get("backbone") != "roberta-large" for e in by_backbone)
    assert len(by_backbone) < len(full) and "BERTScore-RoBERTa-large" in notes.left_out_note("paper", "roberta-large")
    # the offline book leaves the generation metrics out of the chapters after 3 (on two CPU cores)
    for chapter in ("04_bias_measures", "05_association_tests", "07_gender_swap"):
        skip = chapter_profiles.parameters("offline", chapter)["skip_metrics"]
        assert {"bartscore", "prism"} <= profiles.names_of(skip)
        assert chapter_profiles.parameters("paper", chapter).get("skip_metrics", "") == ""


def test_backbone_registry_helpers(tiny_bert, tiny_bart, tiny_bert_regressor):
    assert profiles.backbones_for("offline", "encoder") == [b for b in ("all-MiniLM-L6-v2", "all-mpnet-base-v2")
                                                            if b in backbones.available()]
    assert profiles.BACKBONES["offline"]["encoder"] == ["all-MiniLM-L6-v2", "all-mpnet-base-v2"]
    assert "roberta-large" in profiles.backbones_for("paper", "encoder")
    assert [backbones.kind_of(str(p)) for p in (tiny_bert, tiny_bart, tiny_bert_regressor)] == \
        ["encoder", "seq2seq", "regression"]
    assert backbones.kind_of("frugalscore-tiny") == "frugalscore"
    with pytest.raises(ValueError, match="unknown profile"):
        profiles.backbones_for("cloud", "encoder")


def test_cli_score_and_live_bias(tiny_bert, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "scores.csv"
    assert cli.main(["score", "--dataset", "published", "--attribute", "age", "--metric", "bertscore:variant=P",
                     "--backbone", str(tiny_bert), "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.columns) == ["pair_id", "score_1", "score_2", "signature"]
    assert len(table) == 71 and table["signature"].str.contains("variant:P").all()
    bias = tmp_path / "bias.csv"
    assert cli.main(["bias", "--dataset", "published", "--scores", "live", "--attributes", "age,religion",
                     "--metrics", "bleu,bertscore", "--backbones", str(tiny_bert), "--n-resamples", "99",
                     "--out", str(bias)]) == 0
    result = pd.read_csv(bias)
    assert list(result.columns) == BIAS_COLUMNS + ["signature"]
    assert list(zip(result["attribute"], result["metric"])) == [
        ("age", "bleu"), ("religion", "bleu"),
        ("age", f"bertscore@{tiny_bert}"), ("religion", f"bertscore@{tiny_bert}")]
    assert (result["bias"] >= 0).all() and (result["bias_ci_low"] <= result["bias"]).all()
    # the live BERTScore-P bias of age equals the one computed from the `score` output
    from metricbias.bias.pairwise import absolute_bias

    assert cli.main(["bias", "--scores", "live", "--metrics", "bertscore", "--backbones", str(tiny_bert),
                     "--attributes", "age", "--n-resamples", "99", "--out", str(bias)]) == 0
    assert cli.main(["score", "--attribute", "age", "--metric", "bertscore", "--backbone", str(tiny_bert),
                     "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert pd.read_csv(bias)["bias"].iloc[0] == pytest.approx(absolute_bias(table["score_1"], table["score_2"]))


def test_cli_errors_are_clear(tmp_path, capsys):
    assert cli.main(["bias", "--scores", "live", "--out", str(tmp_path / "x.csv")]) == 2
    assert "metricbias bias: error: --scores live needs --metrics" in capsys.readouterr().err
    assert cli.main(["bias", "--dataset", "built", "--scores", "published", "--out", str(tmp_path / "x.csv")]) == 2
    assert "metricbias bias: error: --scores published needs --dataset published" in capsys.readouterr().err
    assert cli.main(["score", "--attribute", "age", "--metric", "bertscore", "--backbone", "roberta-large",
                     "--out", str(tmp_path / "x.csv")]) == 2
    assert "not available on this machine" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_cli_metrics_lists_every_metric(capsys):
    assert cli.main(["metrics"]) == 0
    text = capsys.readouterr().out
    for name in metrics.names():
        assert f"\n{name} " in "\n" + text
    assert "all-MiniLM-L6-v2*" in text and "bart-base" in text


def test_the_default_profile_runs_the_whole_data_and_full_is_its_other_name():
    assert profiles.suite("full") == profiles.suite("offline")
    offline = {ch: chapter_profiles.parameters("offline", ch)
               for ch in ("03_metrics_and_backbones", "04_bias_measures", "05_association_tests", "07_gender_swap")}
    assert offline["03_metrics_and_backbones"]["sample_size"] == 0
    assert offline["03_metrics_and_backbones"]["built_sample_size"] == 0
    assert offline["04_bias_measures"]["pll_sample_size"] == 0 and offline["04_bias_measures"]["sample_size"] == 0
    # whole SEAT sets for every configuration, from the association packs
    assert offline["05_association_tests"]["sample_size"] == 0
    assert offline["05_association_tests"]["drawn_sample_size"] == 0
    assert offline["07_gender_swap"]["darr_pairs"] == 0 and offline["07_gender_swap"]["sample_size"] == 0
    for chapter, values in offline.items():
        assert {**chapter_profiles.parameters("full", chapter), "profile": "offline"} == values
