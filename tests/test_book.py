"""Every chapter in _toc.yml executes under the smoke profile and the book builds (Sphinx warnings fail)."""

import nbformat
import pytest

from metricbias import runner

pytestmark = pytest.mark.book


def test_chapters_are_listed_in_toc_order():
    stems = [c.stem for c in runner.chapters()]
    assert stems[0] == "01_published_reproduction"
    assert stems == sorted(stems)


def test_every_chapter_executes_and_the_book_builds(book_copy):
    outputs = runner.run(profile="smoke", log=lambda *_: None)
    assert len(outputs) == len(runner.chapters(book_copy))
    for out in outputs:
        nb = nbformat.read(out, as_version=4)
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
        assert not errors, f"{out.name}: {errors[0]['ename']}: {errors[0]['evalue']}"
    index = runner.build_book(book_copy, strict=True)
    assert index.exists()
    html = (book_copy / "book/_build/html/book/chapters/01_published_reproduction.html").read_text()
    assert "Reproducing the published bias table" in html


def test_a_failing_chapter_names_the_chapter_and_cell(book_copy):
    nb = book_copy / "notebooks" / "01_published_reproduction.md"
    nb.write_text(nb.read_text().replace("\nimport ", "\nraise RuntimeError('boom')\nimport ", 1))  # the set-up cell
    with pytest.raises(runner.ChapterError, match=r"chapter 01_published_reproduction .* failed in cell \d+.*boom"):
        runner.run(profile="smoke", only="01", log=lambda *_: None)
    assert not (book_copy / "book/chapters/01_published_reproduction.ipynb").exists()
