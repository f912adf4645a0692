"""Every figure of a chapter is numbered and cited: it reaches the page through ``display.figure`` and a
``glue:figure`` block with a ``:name:``, and the chapter's prose refers to it by that name with ``{numref}``
(rendered "Figure 3.2")."""

import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.md"))
BLOCK = re.compile(r"```\{glue:figure\}\s*(\S+)\n((?::\w+:.*\n)*)")


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_is_named_and_cited_by_number(chapter):
    text = chapter.read_text()
    assert "plt.show()" not in text, f"{chapter.name}: a figure shown with plt.show() has no number; use display.figure"
    for key, options in BLOCK.findall(text):
        name = re.search(r":name:\s*(\S+)", options)
        assert name, f"{chapter.name}: the glue:figure {key} has no :name:, so it cannot be cited"
        assert f"{{numref}}`{name.group(1)}`" in text, f"{chapter.name}: no {{numref}}`{name.group(1)}` in the prose"


def test_the_check_sees_the_chapters_figures():
    assert sum(len(BLOCK.findall(p.read_text())) for p in NOTEBOOKS) >= 30
