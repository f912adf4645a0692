"""Every chapter in _toc.yml executes under the smoke profile and the book builds (Sphinx warnings fail); the built
pages show no leaks and fit a phone and a laptop screen in headless Chromium."""

import json
import re

import nbformat
import pytest

from pathlib import Path

from metricbias.book import runner

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.book


def test_chapters_are_listed_in_toc_order():
    stems = [c.stem for c in runner.chapters()]
    assert stems[0] == "01_published_reproduction"
    assert stems == sorted(stems)


def test_every_chapter_executes_and_the_book_builds(smoke_book):
    book_root, outputs = smoke_book
    assert len(outputs) == len(runner.chapters(book_root))
    for out in outputs:
        nb = nbformat.read(out, as_version=4)
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
        assert not errors, f"{out.name}: {errors[0]['ename']}: {errors[0]['evalue']}"
    html_dir = book_root / "book" / "_build" / "html"
    assert (html_dir / "index.html").exists()
    html = (html_dir / "book/chapters/01_published_reproduction.html").read_text()
    assert "Reproducing the published bias table" in html
    assert not leaks(html_dir, [book_root, REPO, book_root.parent / "cache"])
    assert "mathjax/tex-chtml.js" in html and (html_dir / "_static/mathjax/tex-chtml.js").exists()
    assert "cdn.jsdelivr" not in html  # math renders offline
    assert "metricbias.css" in html and (html_dir / "_static/metricbias.css").exists()  # the book's table styles
    bibliography = (html_dir / "book/bibliography.html").read_text()
    assert "Sun et al., 2022" in bibliography and "[LLuken" not in bibliography


def test_the_landing_page_shows_the_summary_figure_and_the_appendix_the_cite_and_reproduce_box(smoke_book):
    """The closing chapter's summary figure, numbered, on the landing page; the box with the run's profile and every
    chapter's time in the Reproducibility appendix, not on the landing page."""
    book_root, _ = smoke_book
    html = book_root / "book" / "_build" / "html" / "book"
    index = (html / "intro.html").read_text(encoding="utf-8")
    assert re.search(r'<img[^>]+src="\.\./_images/landing-summary[^"]*\.png"', index), "no summary figure"
    assert re.search(r"Figure 1\b", index)
    assert "Cite and reproduce</p>" not in index and "make book" not in index
    appendix = (html / "chapters" / "A3_reproducibility.html").read_text(encoding="utf-8")
    box = appendix[appendix.index("Cite and reproduce</p>"):]
    assert "profile <code>smoke</code>" in box and "make book PROFILE=smoke" in box
    for chapter in runner.chapters(book_root):
        row = re.search(rf"<td>{chapter.stem}</td><td>([^<]+)</td>", box)
        assert row and row.group(1) != "—", chapter.stem  # every chapter's time, from this run's timings
    assert "<IPython.core.display" not in index


def test_pages_fit_a_phone_and_a_laptop_screen_in_chromium(smoke_pages_in_chromium):
    """The built pages in headless Chromium at 420 px and 1280 px (tests/browser.py): the page never scrolls
    sideways; whatever is wider than the column (a table, code, an equation) scrolls inside its own box and is not
    clipped; no image is wider than the viewport."""
    import browser

    pages, measured = smoke_pages_in_chromium
    assert sorted(measured) == sorted(browser.WIDTHS)
    for width, results in measured.items():
        assert sorted(results) == sorted(p.name for p in pages)
        assert all(r.get("viewport") == width for r in results.values()), results
        assert not browser.problems(results), f"at {width} px:\n" + "\n".join(browser.problems(results))


#: what a rendered page must not show: the building machine's paths, development wording, raw warnings, raw TeX
LEAK_PATTERNS = [r"\.venv/", r"site-packages", r"\.cache/", r"/root/", r"/home/", r"/tmp/", r"\.py:\d+",
                 r"No GPU was lent", r"issue we work from", r"\bthe issue's\b", r"\bissue #?\d+\b", r"Traceback",
                 r"\w+Warning: ", r"output stderr",
                 r"\$[A-Za-z\\][^$<]{0,40}\$",  # math left as raw TeX (Markdown printed by a code cell)
                 r"(<|&lt;)IPython\.core\.display",  # a Markdown object pasted with {glue:text} instead of {glue:md}
                 r"(?s)<(fig)?caption\b[^>]*>(?:(?!</(fig)?caption>).)*`",  # Markdown code left raw in a caption
                 r"(?i)\bthis (machine|CPU)\b", r"\(0 warnings\)",  # the build machine, in the prose
                 r"(&#39;|&#x27;|')\| [^|<\n]{1,60} \|[^<]*\\n\|"]  # a Markdown table's repr printed by a cell


def leaks(html_dir, roots) -> list[str]:
    """``file: match`` for every leak in the built HTML pages (text, not the theme's scripts)."""
    found = []
    patterns = [re.compile(p) for p in LEAK_PATTERNS] + [re.compile(re.escape(str(r))) for r in roots]
    for page in sorted(html_dir.rglob("*.html")):
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        text = re.sub(r"<script.*?</script>", "", page.read_text(encoding="utf-8"), flags=re.S)
        for pattern in patterns:
            match = pattern.search(text)
            if match:
                found.append(f"{page.relative_to(html_dir)}: {text[max(0, match.start() - 80):match.end() + 80]!r}")
    return found


def test_a_failing_chapter_names_the_chapter_and_cell(book_copy):
    nb = book_copy / "notebooks" / "01_published_reproduction.md"
    nb.write_text(nb.read_text().replace("\nimport ", "\nraise RuntimeError('boom')\nimport ", 1))  # the set-up cell
    with pytest.raises(runner.ChapterError, match=r"chapter 01_published_reproduction .* failed in cell \d+.*boom"):
        runner.run(profile="smoke", only="01", log=lambda *_: None)
    assert not (book_copy / "book/chapters/01_published_reproduction.ipynb").exists()


def test_the_new_attribute_recipe_of_the_appendix_works_as_written(book_copy, tmp_path, capsys,
                                                                   smoke_chapter_3_cache):
    """The recipe of the appendix "Using metricbias" (section "A new attribute") on a temporary attribute: a
    lexicon file, a config entry, `build-datasets`, then `metricbias run --only 03 -p attributes=<name>` (written
    elsewhere with --out). As after `make book`, the score cache holds the book's scores (the smoke book's, copied
    once its chapter 3 has run), so only the new attribute's pairs are scored."""
    from metricbias import cli

    assert smoke_chapter_3_cache == tmp_path / "cache"  # the cache book_copy points the run at

    recipe = (book_copy / "notebooks" / "A1_using_metricbias.md").read_text()
    recipe = recipe[recipe.index("## A new attribute"):recipe.index("## Audit your own metric")]
    for step in ("data/lexicons/<name>.yml", "data/lexicons/attributes.yml", "`source`", "`bias_types`",
                 "`lexicon`", "metricbias build-datasets --attributes <name>",
                 "metricbias run --only 03 -p attributes=<name>"):
        assert step in recipe, f"the appendix's recipe no longer says {step!r}: update this test with it"

    lexicons = book_copy / "data" / "lexicons"
    text = (lexicons / "disability.yml").read_text().replace("attribute: disability", "attribute: ability")
    (lexicons / "ability.yml").write_text(text)
    with open(lexicons / "attributes.yml", "a") as config:
        config.write("\nability:\n  source: crows_pairs\n  bias_types: [disability]\n  lexicon: ability\n"
                     "  description: a fork of CrowS-Pairs disability\n")
    assert cli.main(["build-datasets", "--attributes", "ability"]) == 0
    assert (book_copy / "data" / "built" / "ability.tsv").exists()
    out = tmp_path / "fork"
    assert cli.main(["run", "--only", "03", "--profile", "smoke", "-p", "attributes=ability", "--out", str(out)]) == 0
    nb = nbformat.read(out / "03_metrics_and_backbones.ipynb", as_version=4)
    shown = "".join("".join(map(str, o.get("data", {}).values())) + str(o.get("text", ""))
                    for c in nb.cells for o in c.get("outputs", []))
    from metricbias.book import records  # its parameters and rerun command, kept for the Reproducibility appendix

    record = records.load("03_metrics_and_backbones", "smoke")
    built = (book_copy / "_static" / "data" / "ch3-bias-built.csv").read_text(encoding="utf-8")
    assert re.search(r"(?<!dis)ability\b", shown + json.dumps(record["entries"]) + built)  # measured the new attribute
    assert {"parameter": "attributes", "value": "ability"} in [
        {k: p[k] for k in ("parameter", "value")} for p in record["parameters"]]
    assert "-p attributes=ability" in record["command"]
    assert not (book_copy / "book" / "chapters" / "03_metrics_and_backbones.ipynb").exists()
