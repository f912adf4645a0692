"""No table, link or figure of a chapter is lost, and no sentence announces one that is not there.

* ``display.table`` and ``display.download`` put their output on the page where they are called (checked in a real
  kernel), so a table that is not the last expression of its cell still renders; every other ``display`` function
  a chapter calls returns nothing that could be lost.
* A cell that draws a figure hands it to the page (``display.figure``), under a name that a ``glue:figure`` block of
  the same chapter shows, or to the reproducibility appendix (``records.keep``); every such block has its figure.
* A paragraph that ends with a colon, or speaks of "the table below", is followed by a cell that always shows
  something: a table, a download link, a figure or printed output; never one that shows it only when it is not
  empty. The same holds for the executed chapters in ``book/chapters`` when a build is there.
"""

import ast
import inspect
import re
from pathlib import Path

import jupytext
import nbformat
import pandas as pd
import pytest

from metricbias.book import display

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.md"))
#: the calls that show something on the page (or print it) where they stand
SHOWS = {"display.table", "display.download", "print"}
#: the calls that draw a figure, which display.figure must then hand to the page
DRAWS = re.compile(r"^(plots\.\w+|sns\.\w+plot|sns\.\w+grid|plt\.(subplots|figure))$", re.I)
#: the blocks that paste a numbered table or figure into the Markdown
DIRECTIVES = ("```{table}", "````{table}", "~~~~{table}", "```{glue:figure}", "````{glue:figure}", "```{figure}")
ANNOUNCES = re.compile(r"(?i)\b(the|this) (table|tables) below\b|\bas follows\b")


def cells(path: Path) -> list[tuple[str, str]]:
    """(cell type, source) of a chapter notebook, in order."""
    return [(c.cell_type, c.source) for c in jupytext.read(path).cells]


def statements(source: str) -> list[ast.stmt]:
    """The top-level statements of a code cell (IPython magics and shell lines left out)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    return ast.parse(code).body


def called(node) -> str:
    """``display.table`` for a call of ``display.table(...)``; "" for anything that is not a call."""
    return ast.unparse(node.func) if isinstance(node, ast.Call) else ""


def shows(source: str) -> bool:
    """Whether a code cell always puts something on the page: a top-level call of :data:`SHOWS` or of
    ``display.figure``, a ``print`` anywhere, or a shell line (their printed output)."""
    if any(line.lstrip().startswith("!") for line in source.splitlines()):
        return True
    body = statements(source)
    printed = any(called(n) == "print" for s in body for n in ast.walk(s))
    return printed or any(isinstance(s, ast.Expr) and called(s.value) in SHOWS | {"display.figure"} for s in body)


def lost(statement: ast.stmt) -> bool:
    """Whether ``statement``, before its cell's last one, is a bare value that the page never shows (a call, or a
    choice between calls, is run for what it does)."""
    if not isinstance(statement, ast.Expr):
        return False
    value = statement.value
    if isinstance(value, ast.IfExp):
        return not all(isinstance(v, ast.Call) or (isinstance(v, ast.Constant) and v.value is None)
                       for v in (value.body, value.orelse))
    return not isinstance(value, ast.Call)


def figure_names(text: str) -> list[re.Pattern]:
    """The names a chapter hands its figures to the page under (``display.figure`` or ``glue`` of a figure), as
    patterns (an f-string's fields match any name part)."""
    names = re.findall(r"display\.figure\(\s*f?[\"']([^\"']+)[\"']", text)
    names += re.findall(r"\bglue\(\s*f?[\"']([^\"']+)[\"'],\s*[^,]*\bfig(?:ure)?\b", text)
    return [re.compile(re.sub(r"\\\{[^}]*\\\}", r"[\\w-]+", re.escape(n)) + "$") for n in names]


def last_paragraph(markdown: str) -> str:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", markdown.strip()) if p.strip()]
    return paragraphs[-1] if paragraphs else ""


def announcements(path: Path) -> list[tuple[int, str]]:
    """(cell index, sentence) of every Markdown cell of ``path`` that announces what follows it."""
    found = []
    for i, (kind, source) in enumerate(cells(path)):
        last = last_paragraph(source)
        if kind == "markdown" and last and not last.startswith(("```", "$$", "|", "-", "*", "1.")):
            if last.endswith(":") or ANNOUNCES.search(last):
                found.append((i, last[-100:]))
    return found


def test_every_display_function_a_chapter_calls_shows_its_output_or_returns_nothing():
    used = {m.group(1) for p in NOTEBOOKS for m in re.finditer(r"\bdisplay\.(\w+)\(", p.read_text())}
    assert {"table", "download", "figure"} <= used
    for name in used - {"capture_warnings"}:  # a context manager, used in a `with`
        returns = inspect.signature(getattr(display, name)).return_annotation
        assert returns in (None, "None", display.Shown, "Shown"), f"display.{name} returns {returns}: it can be lost"


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_cell_drops_a_value_or_a_figure(chapter):
    text = chapter.read_text()
    for kind, source in cells(chapter):
        if kind != "code":
            continue
        body = statements(source)
        for s in body[:-1]:  # a bare value before the cell's last statement is never shown
            assert not lost(s), \
                f"{chapter.name}: `{ast.unparse(s)[:80]}` is lost: only a cell's last expression is shown"
        calls = [called(n) for n in ast.walk(ast.Module(body=body, type_ignores=[])) if isinstance(n, ast.Call)]
        if any(DRAWS.match(c) for c in calls) and not {"landing.save_figure", "records.keep"} & set(calls):
            assert figure_names(source), f"{chapter.name}: a figure drawn here never reaches the page:\n{source}"
    handed = figure_names(text)
    blocks = set(re.findall(r"```\{glue:figure\}\s*(\S+)", text))
    assert not [n.pattern for n in handed if not any(n.match(b) for b in blocks)], f"{chapter.name}: a figure has no block"
    assert not [b for b in blocks if not any(n.match(b) for n in handed)], f"{chapter.name}: a block has no figure"


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_sentence_that_announces_a_table_or_figure_is_followed_by_one(chapter):
    source = cells(chapter)
    for i, sentence in announcements(chapter):
        following = source[i + 1] if i + 1 < len(source) else ("end", "")
        if following[0] == "markdown" and following[1].lstrip().startswith(DIRECTIVES):
            continue  # a numbered table or figure pasted right below
        assert following[0] == "code" and shows(following[1]), \
            f"{chapter.name}: '…{sentence}' announces what follows, but the next cell does not always show it"
        last = statements(following[1])[-1:]
        assert not (last and isinstance(last[0], ast.Expr) and isinstance(last[0].value, ast.IfExp)), \
            f"{chapter.name}: '…{sentence}' announces a table that is shown only when it is not empty"


def test_the_announcement_check_sees_the_chapters():
    """The check finds the book's announcing sentences, and would catch a table shown only when not empty."""
    # numbered tables and figures (issue 41) replaced most announcing sentences; the appendices keep several
    assert sum(len(announcements(p)) for p in NOTEBOOKS) >= 5
    assert shows("x = 1\ndisplay.table(frame)\ny = 2") and not shows("x = display.table(frame)")
    assert not shows("display.glue_findings({}, 'ch0_')") and shows("!metricbias --help")
    assert lost(ast.parse("frame").body[0]) and lost(ast.parse("t if t is not None else 1").body[0])
    assert not lost(ast.parse("plots.curve(x) if len(x) else None").body[0])
    [pattern] = figure_names('display.figure(f"fig-ch8-cells-{name}", fig)')
    assert pattern.match("fig-ch8-cells-live") and not pattern.match("fig-ch8-other")


def executed_gaps(path: Path) -> list[str]:
    """In an executed chapter: every announcing Markdown cell whose next cell puts nothing on the page (no table,
    link, image, printed text, nor a figure block right after it)."""
    nb = nbformat.read(path, as_version=4)
    gaps = []
    for i, c in enumerate(nb.cells):
        last = last_paragraph(c.source) if c.cell_type == "markdown" else ""
        if not (last.endswith(":") or ANNOUNCES.search(last)) or last.startswith(("```", "$$", "|")):
            continue
        after = nb.cells[i + 1:i + 3]
        visible = any(o.output_type == "stream" or set(o.get("data", {})) & {"text/html", "text/markdown", "image/png"}
                      for o in (after[0].get("outputs", []) if after and after[0].cell_type == "code" else []))
        figure = (len(after) > 1 and after[1].source.lstrip().startswith(DIRECTIVES)) or \
            (bool(after) and after[0].cell_type == "markdown" and after[0].source.lstrip().startswith(DIRECTIVES))
        if not (visible or figure):
            gaps.append(f"{path.name}: '…{last[-80:]}'")
    return gaps


def test_executed_chapters_show_what_they_announce():
    built = [p for p in sorted((REPO / "book" / "chapters").glob("*.ipynb")) if not p.name.startswith(".")]
    if not built:
        pytest.skip("no executed chapter in book/chapters (run `metricbias run` first)")
    assert not [g for p in built for g in executed_gaps(p)]


def test_the_executed_check_catches_an_announced_table_that_is_absent(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("The pairs METEOR matches:"), nbformat.v4.new_code_cell("None")]
    nbformat.write(nb, tmp_path / "x.ipynb")
    assert executed_gaps(tmp_path / "x.ipynb") == ["x.ipynb: '…The pairs METEOR matches:'"]
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<table></table>"})]
    nbformat.write(nb, tmp_path / "x.ipynb")
    assert executed_gaps(tmp_path / "x.ipynb") == []


def test_a_table_that_is_not_the_last_expression_still_renders_in_a_kernel(tmp_path):
    """In a real kernel (as papermill runs a chapter): a table in the middle of a cell is shown, once; a table as a
    cell's last expression is shown once, not twice; a download link likewise."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    setup = ("import pandas as pd\nfrom metricbias.book import display\n"
             f"display.downloads_dir = lambda: __import__('pathlib').Path({str(tmp_path)!r})\n"
             "t = pd.DataFrame({'eq2': [1.5]})\n")
    nb.cells = [nbformat.v4.new_code_cell(setup + "display.table(t, caption='middle')\nx = 1"),
                nbformat.v4.new_code_cell("display.table(t, caption='last')"),
                nbformat.v4.new_code_cell("display.download(t, 'middle-link')\ny = 2")]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    html = [["".join(o.get("data", {}).get("text/html", "")) for o in c.outputs] for c in nb.cells]
    assert len(html[0]) == 1 and "middle" in html[0][0] and ">Eq. 2</th>" in html[0][0]
    assert len(html[1]) == 1 and "last" in html[1][0]
    links = [o["data"]["text/markdown"] for o in nb.cells[2].outputs if "text/markdown" in o.get("data", {})]
    assert links == ["Download the full table (1 rows × 1 columns) as "
                     "[`middle-link.csv`](../../_static/data/middle-link.csv)."]
    assert (tmp_path / "middle-link.csv").exists()


def test_a_table_outside_a_kernel_is_shown_when_displayed():
    shown = display.table(pd.DataFrame({"eq2": [1.0]}))
    assert not shown.on_page and ">Eq. 2</th>" in shown.to_html()


def test_every_figure_or_table_a_sentence_names_exists():
    """"{numref}`fig-…` shows …" points at a numbered figure or table of the book, never at one that is gone."""
    pages = NOTEBOOKS + sorted((REPO / "book").glob("*.md"))
    names = {n for p in pages for n in re.findall(r"^:name:\s*(\S+)", p.read_text(), flags=re.M)}
    for page in pages:
        for target in re.findall(r"\{numref\}`(?:[^`<]*<)?([\w-]+)>?`", page.read_text()):
            assert target in names, f"{page.name}: {{numref}}`{target}` names no figure or table"


@pytest.mark.parametrize("chapter", NOTEBOOKS, ids=lambda p: p.stem)
def test_jupytext_reads_every_code_cell_a_chapter_holds(chapter):
    """A backtick fence whose first line holds a backtick (a glue role in a caption) ends early for jupytext, which
    then drops the code cells after it without a word: such a caption needs a ``~~~~`` fence."""
    text = chapter.read_text()
    written = len(re.findall(r"^```\{code-cell\}", text, flags=re.M))
    read = sum(kind == "code" for kind, _ in cells(chapter))
    assert read == written, f"{chapter.name}: jupytext reads {read} of its {written} code cells"
    for line in text.splitlines():
        if re.match(r"^`{3,}\{", line):
            assert "`" not in re.sub(r"^`{3,}", "", line), f"{chapter.name}: a backtick in a fence's first line: {line[:60]}"

