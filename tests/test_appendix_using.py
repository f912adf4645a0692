"""The software tutorials live in the appendix "Using metricbias" (notebooks/A1_using_metricbias.md), not in the
chapters: the chapters link to it in one sentence, and the README points to its sections. The recipe itself runs
in tests/test_book.py (marker `book`)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
APPENDIX = REPO / "notebooks" / "A1_using_metricbias.md"
SECTIONS = ["## A new attribute", "## Audit your own metric", "## Your own human-judged data"]


def test_the_appendix_holds_the_three_tutorials_in_order():
    text = APPENDIX.read_text(encoding="utf-8")
    where = [text.index(s) for s in SECTIONS]
    assert where == sorted(where)
    assert "mb.audit(length_ratio" in text and "toys import length_ratio" in text and '"metaeval", "--dataset"' in text
    assert "`metricbias build-datasets --attributes <name>`" in text


def test_the_chapters_link_to_the_appendix_instead_of_holding_the_tutorials():
    for stem, gone in [("02_datasets", "## A new attribute"), ("03_metrics_and_backbones", "## Audit your own"),
                       ("07_gender_swap", "## Bring your own")]:
        text = (REPO / "notebooks" / f"{stem}.md").read_text(encoding="utf-8")
        assert gone not in text, stem
        assert len(re.findall(r"\{doc\}`A1_using_metricbias`", text)) == 1, stem


def test_the_readme_points_to_the_appendix_sections():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    text = APPENDIX.read_text(encoding="utf-8")
    for path in re.findall(r"`(notebooks/A\d_\w+\.md)`", readme):
        assert (REPO / path).exists(), path
    assert "`notebooks/A1_using_metricbias.md`" in readme and "`notebooks/A2_reference.md`" in readme
    bullet = readme.split('Appendix "Using metricbias"', 1)[1].split("\n- ", 1)[0]  # it names the sections quoted
    named = re.findall(r'"([^"]+)"', bullet)
    assert {"A new attribute", "Your own pairs", "Audit a pairwise judge"} <= set(named)
    for section in named:
        assert f"## {section}" in text, section
    assert 'chapter 2, "A new attribute' not in readme and "documented in chapter 7" not in readme


def test_the_appendix_ci_gate_command_runs(tmp_path, monkeypatch):
    """The GitHub Actions job's audit command, as the appendix prints it, on a pairs file of its own."""
    import shlex

    import pandas as pd

    from metricbias.audits import over_thresholds
    from metricbias.cli import main

    text = APPENDIX.read_text(encoding="utf-8")
    job = text[text.index("```yaml"):]
    job = job[:job.index("```", 7)]
    (line,) = [x for x in job.splitlines() if "metricbias audit" in x]
    argv = shlex.split(line.split("run:", 1)[1])
    assert argv[:2] == ["metricbias", "audit"] and "--fail-above" in argv and "--pairs" in argv
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"attribute": ["gender"] * 3, "candidate_1": ["he is a nurse", "his car is fast", "the man cooks"],
                  "candidate_2": ["she is a nurse", "her car is fast", "the woman cooks"],
                  "reference": ["the nurse works", "the car is fast", "someone cooks dinner"]}).to_csv(
        "pairs.tsv", sep="\t", index=False)
    status = main([*argv[1:], "--n-resamples", "200"])
    table = pd.read_csv("audit.csv")
    gates = {m: float(v) for m, v in (argv[i + 1].split("=") for i, a in enumerate(argv) if a == "--fail-above")}
    assert status == (1 if over_thresholds(table, gates) else 0)


def test_the_appendix_toys_are_what_the_page_says():
    from metricbias.book import display
    from metricbias.book.reproduction import toys

    assert toys.length_ratio(["she", "he"], ["he", "he"]) == [1.5, 1.0]
    assert toys.longer_first("r", "x", "x") == pytest.approx(1 / (1 + math.exp(-0.3)))  # the position bonus alone
    assert toys.longer_first("r", "she", "he") > toys.longer_first("r", "he", "she")
    assert display.p_cell(0.031) == "0.031" and display.p_cell(0.0) == "< 1e-300"
