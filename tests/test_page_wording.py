"""The book speaks of the study, never of its build: no phrase about the machine, the data mirror, the score files,
the test suite or the project's history on a page.

Scanned: the Markdown of every page (the chapter notebooks outside their code cells, the landing page and the
other book pages; not the reproducibility appendix, which is about the build) and every string the page-writing Python modules can put on a page (``book/reproduction``,
``book/display.py``: their string literals, docstrings and comments left out). A page may link to where the
engineering lives (the README, appendix A1, ``benchmarks/``); the link text is not scanned.
"""

import ast
import re
from pathlib import Path

import jupytext
import pytest

REPO = Path(__file__).resolve().parents[1]
BOOK = REPO / "src" / "metricbias" / "book"
#: every page but the reproducibility appendix, whose subject is the build (runs, score packs, warnings, timings)
PAGES = [p for p in sorted((REPO / "notebooks").glob("*.md")) + sorted((REPO / "book").glob("*.md"))
         if not re.search(r"(?m)^# Reproducibility", p.read_text(encoding="utf-8"))]
MODULES = sorted((BOOK / "reproduction").glob("*.py")) + [BOOK / "display.py"]
#: build wording, as the review sheet lists it (case-insensitive, whole words)
BUILD_WORDING = [r"our mirror", r"the mirror", r"(can be )?downloaded here", r"CPU cores?", r"two cores",
                 r"test suite", r"tiny BERT", r"now takes", r"not yet", r"when it was shipped", r"this machine",
                 r"score packs?", r"pack sentence", r"\d[\d,]* warnings? \(", r"raised \d[\d,]* warnings?",
                 r"no warnings\b"]
PATTERN = re.compile(r"(?i)\b(" + "|".join(BUILD_WORDING) + r")")


def page_text(path: Path) -> str:
    """The prose of a page: a notebook's Markdown cells, or a Markdown page with its code blocks removed; links
    and inline code left out."""
    if path.parent.name == "notebooks":
        text = "\n\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")
    else:
        text = re.sub(r"(?s)^---\n.*?\n---\n", "", path.read_text(encoding="utf-8"))
    text = re.sub(r"(?ms)^```(?!\{)[^\n]*\n.*?^```", "", text)  # code blocks; a directive's body (a caption) stays
    text = re.sub(r"\[[^\]]*\]\([^)]*\)", "", text)  # links: their text and target
    text = re.sub(r"(?m)^```.*$", "", text)  # a directive's fences and name
    return re.sub(r"`[^`\n]*`", "", text)


def page_strings(path: Path) -> list[str]:
    """The string literals of a module that can reach a page: every string constant (f-strings' parts included)
    except docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def found(texts, where: str) -> list[str]:
    hits = []
    for text in texts:
        for m in PATTERN.finditer(text):
            hits.append(f"{where}: …{text[max(0, m.start() - 60):m.end() + 30]!r}")
    return hits


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_no_build_wording_on_a_page(page):
    assert not found([page_text(page)], page.name)


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_no_build_wording_in_the_strings_a_module_puts_on_a_page(module):
    assert not found(page_strings(module), module.name)


def test_the_scan_catches_each_phrase_and_leaves_docstrings_and_links_alone(tmp_path):
    for phrase in ("MultiNLI is not in our mirror", "no tagger can be downloaded here", "on two CPU cores",
                   "The test suite checks them on a tiny BERT", "the article now takes the place",
                   "not yet a usable metric", "recorded with each adapter when it was shipped",
                   "read from score packs", "3 warnings (UserWarning): cells", "raised 2 warnings",
                   "on this machine"):
        assert found([phrase], "x"), phrase
    assert not found(["the released data", "a metric below BLEU's quality is not used", "yet another"], "x")
    module = tmp_path / "m.py"
    module.write_text('"""Reads score packs."""\n\ndef f():\n    """Not yet."""\n    # the test suite\n'
                      '    return f"{1} came from score packs"\n')
    assert page_strings(module) == [" came from score packs"]
    page = tmp_path / "p.md"
    page.write_text("See [how the test suite runs](../README.md) and `this machine`.\n\n```bash\nnot yet\n```\n")
    assert not found([page_text(page)], "p.md")
    page.write_text("```{glue:figure} fig-x\n:name: fig-x\n\nScores read from score packs.\n```\n")
    assert found([page_text(page)], "p.md")  # a caption is a page's text


@pytest.mark.parametrize("page", sorted((REPO / "notebooks").glob("*.md")), ids=lambda p: p.stem)
def test_no_warning_count_is_pasted_into_a_page(page):
    """A chapter may count the warnings its scoring raised (for the reproducibility record), but never pastes
    that count into its prose."""
    text = page.read_text(encoding="utf-8")
    keys = re.findall(r"[\"'](\w+)[\"']\s*:\s*notes\.warning_summary\(", text)
    keys += re.findall(r"\bglue\(\s*[\"'](\w+)[\"'],\s*(?:Markdown\()?notes\.warning_summary\(", text)
    pasted = re.findall(r"\{glue:(?:md|text)\}`(\w+)", text)
    assert not [p for p in pasted for k in keys if p == k or p.endswith(f"_{k}")], page.name
