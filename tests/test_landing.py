"""The landing page's summary (each paradigm's average bias with its interval) and its "Cite and reproduce" box."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metricbias import __version__, profiles
from metricbias.bias.pairwise import bias_table
from metricbias.book import chapter_profiles
from metricbias.book.reproduction import landing

REPO = Path(__file__).resolve().parents[1]


def scores_of(cells: dict) -> pd.DataFrame:
    """A long score table from ``{(attribute, metric): [(score_1, score_2), ...]}``."""
    rows = [{"attribute": a, "metric": m, "pair_id": i, "score_1": s1, "score_2": s2}
            for (a, m), pairs in cells.items() for i, (s1, s2) in enumerate(pairs)]
    return pd.DataFrame(rows)


CONFIGS = pd.DataFrame({"metric": ["M1", "M2", "B"], "paradigm": ["Matching", "Matching", "n-gram"]})


def test_a_paradigm_bias_per_attribute_is_worked_by_hand():
    # gender, M1: pooled min 0, max 100 -> terms 100 and 0; M2: min 0, max 10 -> terms 0 and 100
    # per pair, the mean over Matching's configurations: 50, 50 -> 50; race, M1: terms 100, 50; M2: 0, 100
    # -> per pair 50, 75 -> 62.5. No average over the attributes.
    cells = {("gender", "M1"): [(0, 100), (50, 50)], ("gender", "M2"): [(5, 5), (0, 10)],
             ("gender", "B"): [(1, 2), (3, 3)],
             ("race", "M1"): [(0, 100), (25, 75)], ("race", "M2"): [(2, 2), (10, 0)], ("race", "B"): [(0, 1), (1, 0)]}
    out = landing.paradigm_by_attribute(scores_of(cells), CONFIGS, label="live", n_resamples=0)
    assert list(out.columns) == landing.AVERAGE_COLUMNS
    matching = out.set_index(["attribute", "paradigm"]).loc[[("gender", "Matching"), ("race", "Matching")]]
    assert matching["bias"].tolist() == pytest.approx([50.0, 62.5])
    assert matching["configurations"].tolist() == [2, 2] and matching["pairs"].tolist() == [2, 2]
    assert np.isnan(matching["ci_low"]).all()  # no resamples: the point value only
    assert list(out["paradigm"]) == ["Matching", "n-gram"] * 2 and set(out["scores"]) == {"live"}
    # a configuration missing from the configurations (a quality rule left it out) is not counted
    fewer = landing.paradigm_by_attribute(scores_of(cells), CONFIGS[CONFIGS["metric"] != "M2"], label="live",
                                          n_resamples=0).set_index(["attribute", "paradigm"])
    assert fewer.loc[("gender", "Matching"), "bias"] == pytest.approx(50.0)  # M1 alone: terms 100 and 0
    assert fewer.loc[("gender", "Matching"), "configurations"] == 1


def test_each_attribute_is_the_mean_eq2_of_its_cells_and_the_gap_is_paired():
    rng = np.random.default_rng(0)
    cells = {(a, m): list(zip(rng.normal(size=30) + 2 * (m == "M1"), rng.normal(size=30)))
             for a in ("gender", "race", "age") for m in ("M1", "M2", "B")}
    scores = scores_of(cells)
    out = landing.paradigm_by_attribute(scores, CONFIGS, label="released", n_resamples=499, seed=1)
    out = out.set_index(["attribute", "paradigm"])
    cell_bias = bias_table(scores, n_resamples=0).merge(CONFIGS, on="metric").groupby(
        ["attribute", "paradigm"])["bias"].mean()
    for key in cell_bias.index:
        assert out.loc[key, "bias"] == pytest.approx(cell_bias[key])
        assert out.loc[key, "ci_low"] < out.loc[key, "bias"] < out.loc[key, "ci_high"]
    gaps = landing.plm_versus_surface(scores, CONFIGS, label="released", n_resamples=499, seed=1).set_index(
        "attribute")
    for attribute in ("gender", "race", "age"):
        expected = out.loc[(attribute, "Matching"), "bias"] - out.loc[(attribute, "n-gram"), "bias"]
        assert gaps.loc[attribute, "difference"] == pytest.approx(expected)
    found = landing.summary_findings(gaps.reset_index())
    assert found["released_attributes"] == 3
    assert found["released_plm_higher"] + found["released_plm_lower"] + found["released_plm_undecided"] == 3



def test_the_summary_figure_is_written_where_the_landing_page_looks(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    rows = pd.DataFrame({"scores": ["live", "released"] * 2, "attribute": ["gender"] * 2 + ["physical_appearance"] * 2,
                         "paradigm": "Matching", "configurations": 1, "pairs": 2, "clusters": 2,
                         "bias": [3.0, 4.0, 1.0, 2.0], "ci_low": [2.0, 3.0, 0.5, 1.0], "ci_high": [4.0, 5.0, 2.0, 3.0]})
    fig = landing.summary_figure(rows)
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == ["gender", "physical appearance"]
    path = landing.save_figure(fig, tmp_path)
    assert path == tmp_path / landing.FIGURE and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"/{landing.FIGURE.as_posix()}" in (REPO / "book" / "intro.md").read_text()


def write_book(root: Path, profile: str = "smoke") -> None:
    """A two-chapter book under ``root``: a table of contents, the sources and the executed chapters."""
    (root / "notebooks").mkdir(parents=True)
    (root / "book" / "chapters").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n"
                                   "  - file: book/chapters/01_one\n  - file: book/chapters/02_two\n")
    for stem in ("01_one", "02_two"):
        (root / "notebooks" / f"{stem}.md").write_text("# x\n")
        cell = {"cell_type": "code", "metadata": {"tags": ["parameters", "remove-cell"]}, "outputs": [],
                "execution_count": 1, "source": [f"profile = {profile!r}\n", "seed = 0  # the seed"]}
        (root / "book" / "chapters" / f"{stem}.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {},
                                                                              "nbformat": 4, "nbformat_minor": 5}))


def test_the_box_reads_profile_and_times_of_the_run(tmp_path):
    write_book(tmp_path)
    assert landing.executed_profiles(tmp_path / "book" / "chapters") == {"01_one": "smoke", "02_two": "smoke"}
    timings = {"smoke": {"01_one": {"seconds": 75.2, "finished": "2026-01-02 03:04:05"}},
               "offline": {"02_two": {"seconds": 999.0, "finished": "x"}}}  # another profile's run: not this book's
    record = landing.build_record(tmp_path, timings=timings, built="2026-01-02 04:00 UTC")
    assert record["version"] == __version__ and record["profile"] == "smoke"
    assert [(r["chapter"], r["seconds"]) for r in record["chapters"]] == [("01_one", 75.2), ("02_two", None)]
    assert record["total_seconds"] == pytest.approx(75.2)
    assert record["commit"] is None and record["command"] == "make book PROFILE=smoke"
    html = landing.reproduce_box(record)
    for text in (f"metricbias {__version__}", "not a git checkout", "built 2026-01-02 04:00 UTC",
                 "<code>smoke</code>", "<td>01_one</td><td>1 min 15 s</td><td>2026-01-02 03:04:05</td>",
                 "<td>02_two</td><td>—</td>", "<code>make book PROFILE=smoke</code>", "CITATION.cff"):
        assert text in html, text


def test_the_box_names_the_commit_and_uncommitted_changes(tmp_path):
    write_book(tmp_path, profile="offline")

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=tmp_path,
                       check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "book")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    record = landing.build_record(tmp_path, timings={})
    assert (record["commit"], record["modified"]) == (head, False)
    assert record["command"] == f"git checkout {head[:12]} && make book PROFILE=offline"
    assert f"commit <code>{head[:12]}</code>, built" in landing.reproduce_box(record)
    (tmp_path / "notebooks" / "01_one.md").write_text("# changed\n")
    assert "(with uncommitted changes)" in landing.reproduce_box(landing.build_record(tmp_path, timings={}))


def test_chapters_run_with_different_profiles_are_named():
    record = {"version": "0", "commit": None, "modified": False, "built": "b", "profile": None,
              "profiles": ["offline", "smoke"], "chapters": [], "total_seconds": 0, "command": "make book"}
    assert "<code>offline</code>, <code>smoke</code> (chapters differ)" in landing.reproduce_box(record)


def test_durations():
    assert [landing.duration(s) for s in (None, 0.4, 59.6, 60, 3725)] == ["—", "0 s", "1 min 00 s", "1 min 00 s",
                                                                           "62 min 05 s"]


def test_the_closing_chapter_scores_chapter_3s_sample_in_every_profile():
    for name in profiles.names():
        ch3 = chapter_profiles.parameters(name, "03_metrics_and_backbones")
        ch9 = chapter_profiles.parameters(name, "09_metric_users")
        for key in ("sample_size", "darr_pairs", "stsb_pairs"):  # its quality rule reads chapter 3's sets too
            assert ch9.get(key, 0) == ch3.get(key, 0), (name, key)


def test_limitations_read_the_trained_parts_and_chapter_5s_sampling():
    trained = pd.DataFrame({"name": ["para-a", "para-b", "mlm-a", "para-c"], "available": [True, True, True, False],
                            "kind": ["seq2seq", "seq2seq", "mlm", "seq2seq"],
                            "validation_perplexity": [150.0, 90.0, np.nan, 1.0],
                            "stsb-dev pearson": [0.1, np.nan, np.nan, 0.9],
                            "masked_token_accuracy": [np.nan, np.nan, 0.08, np.nan]})
    found = landing.trained_parts_findings(trained)
    assert (found["paraphrasers"], found["mlm_heads"]) == (2, 1)
    assert (found["para_perplexity_min"], found["para_perplexity_max"], found["para_stsb_max"]) == (90.0, 150.0, 0.1)
    assert found["mlm_accuracy_min"] == found["mlm_accuracy_max"] == 0.08


def test_the_summary_interval_resamples_whole_clusters_within_each_attribute():
    """A stratum of twin clusters whose two pairs are equal gives the interval of one pair per cluster (the same
    draws of the clusters); the twins counted as independent pairs would give a narrower one."""
    values = np.random.default_rng(0).normal(size=30)
    other = np.random.default_rng(1).normal(size=50)
    twins = landing.stratified_cluster_interval([np.repeat(values, 2), other],
                                                [np.repeat(np.arange(30), 2), np.arange(50)], n_resamples=999, seed=4)
    single = landing.stratified_cluster_interval([values, other], [np.arange(30), np.arange(50)], n_resamples=999,
                                                 seed=4)
    assert twins == pytest.approx(single)
    as_pairs = landing.stratified_cluster_interval([np.repeat(values, 2), other], [np.arange(60), np.arange(50)],
                                                   n_resamples=999, seed=4)
    assert as_pairs[1] - as_pairs[0] < twins[1] - twins[0]
    assert np.isnan(landing.stratified_cluster_interval([values], [np.zeros(30)], n_resamples=99)[0])  # 1 cluster


def test_plm_backbones_name_the_encoders_of_the_plm_based_configurations_only():
    configs = pd.DataFrame({"metric": ["BLEU", "WMD", "BERTScore-a", "MoverScore-a", "BLEURT-b", "BARTScore-c"],
                            "paradigm": ["n-gram", "static embedding", "Matching", "Matching", "Regression",
                                         "Generation"],
                            "backbone": [None, "word2vec", "BERT-base", "BERT-base", "BERT-large", "BART-base"]})
    assert landing.plm_backbones(configs) == "BERT-base, BERT-large and BART-base"
    assert landing.plm_backbones(configs, families=True) == "BERT and BART"
    assert landing.plm_backbones(configs.iloc[:2]) == "none"


def test_left_out_once_names_identical_configurations_as_chapter_3_does():
    """PRISM-F equals BARTScore-F on a paraphraser without a target tag: one configuration (chapter 3), named with
    both as chapter 7 names it."""
    table = pd.DataFrame({"chapter": ["chapter 4", "chapter 5", "chapter 7"],
                          "left out": ["BERTScore-MPNet, BARTScore-MiniLM-F, BARTScore-MPNet-F, PRISM-MiniLM-F, "
                                       "PRISM-MPNet-F", "PRISM-MiniLM-F", "MoverScore-MPNet"]})
    merged = pd.DataFrame({"metric": ["PRISM-MiniLM-F", "PRISM-MPNet-F"],
                           "same_as": ["BARTScore-MiniLM-F", "BARTScore-MPNet-F"]})
    once = landing.left_out_once(table, merged)
    assert once["left out"].tolist() == ["BERTScore-MPNet, BARTScore-MiniLM-F/PRISM-MiniLM-F, "
                                         "BARTScore-MPNet-F/PRISM-MPNet-F",
                                         "BARTScore-MiniLM-F/PRISM-MiniLM-F", "MoverScore-MPNet"]
    assert once["chapter"].tolist() == table["chapter"].tolist()
    assert landing.left_out_once(table, merged.iloc[0:0]).equals(table)  # nothing merged: the table as it is
