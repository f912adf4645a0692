"""The software tutorials live in the appendix "Using metricbias" (notebooks/A1_using_metricbias.md), not in the
chapters: the chapters link to it in one sentence, and the README points to its sections. The recipe itself runs
in tests/test_book.py (marker `book`)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APPENDIX = REPO / "notebooks" / "A1_using_metricbias.md"
SECTIONS = ["## A new attribute", "## Audit your own metric", "## Your own human-judged data"]


def test_the_appendix_holds_the_three_tutorials_in_order():
    text = APPENDIX.read_text(encoding="utf-8")
    where = [text.index(s) for s in SECTIONS]
    assert where == sorted(where)
    assert "mb.audit(length_ratio" in text and '"metaeval", "--dataset"' in text
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
    for section in re.findall(r'section "([^"]+)"', readme):
        assert f"## {section}" in text, section
    assert 'chapter 2, "A new attribute' not in readme and "documented in chapter 7" not in readme
