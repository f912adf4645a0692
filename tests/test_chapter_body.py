"""Each numbered chapter is one argument (issue 41): its rendered body holds at most 5 tables and 5 figures, every
table has at most 8 columns with word headers, and the rest is in downloads or the Reproducibility appendix."""

import re

import pytest

from metricbias.book import runner

pytestmark = pytest.mark.book

MAX_TABLES = MAX_FIGURES = 5
MAX_COLUMNS = 8


def _body(html: str) -> str:
    """The article of a built page (no navigation, no footer)."""
    start = html.find('<main id="main-content"')
    end = html.find("</main>", start)
    return html[start:end] if start >= 0 else html


def _header_rows(table: str) -> list[list[str]]:
    head = re.search(r"<thead>(.*?)</thead>", table, re.S)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", head.group(1) if head else "", re.S)
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<th[^>]*>(.*?)</th>", r, re.S)] for r in rows]


def _numbered(book_root):
    html_dir = book_root / "book" / "_build" / "html" / "book" / "chapters"
    for chapter in runner.chapters(book_root):
        if chapter.stem[:1].isdigit():
            yield chapter.stem, _body((html_dir / f"{chapter.stem}.html").read_text(encoding="utf-8"))


def test_each_chapter_body_holds_at_most_five_tables_and_five_figures(smoke_book):
    over = {}
    for stem, body in _numbered(smoke_book[0]):
        tables, figures = body.count("<table"), len(re.findall(r"<img\b", body))
        if tables > MAX_TABLES or figures > MAX_FIGURES:
            over[stem] = (tables, figures)
    assert not over, f"(tables, figures) over {MAX_TABLES}/{MAX_FIGURES}: {over}"


def test_chapter_tables_have_at_most_eight_word_columns(smoke_book):
    problems = []
    for stem, body in _numbered(smoke_book[0]):
        for table in re.findall(r"<table.*?</table>", body, re.S):
            for row in _header_rows(table):
                if len(row) > MAX_COLUMNS:
                    problems.append(f"{stem}: {len(row)} columns {row}")
                problems += [f"{stem}: header {h!r} is an identifier" for h in row
                             if re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", h)]
    assert not problems, "\n".join(problems)


def test_each_chapter_links_to_its_reproducibility_section_in_one_line(smoke_book):
    for stem, body in _numbered(smoke_book[0]):
        assert body.count("A3_reproducibility.html#repro-") == 1, stem
