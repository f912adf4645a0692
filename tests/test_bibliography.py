"""The bibliography: every entry of book/references.bib is cited somewhere in the book, and every citation has an
entry (the bibliography page lists all entries, so an uncited one would be a reference the text never uses)."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: where the book's text is written: the chapters, the book's own pages, and the library code whose Markdown a page
#: pastes (a citation role in a glued sentence)
SOURCES = ["notebooks/*.md", "book/*.md", "src/metricbias/**/*.py"]
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")


def bib_keys() -> list[str]:
    return re.findall(r"^@\w+\{([^,\s]+),", (REPO / "book" / "references.bib").read_text(encoding="utf-8"), re.M)


def cited_keys() -> dict[str, set[str]]:
    """``{key: files citing it}`` over :data:`SOURCES`."""
    found: dict[str, set[str]] = {}
    for pattern in SOURCES:
        for path in REPO.glob(pattern):
            for match in CITE.finditer(path.read_text(encoding="utf-8")):
                for key in match.group(1).split(","):
                    found.setdefault(key.strip(), set()).add(str(path.relative_to(REPO)))
    return found


def test_bibliography_keys_are_unique():
    keys = bib_keys()
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


def test_every_bibliography_entry_is_cited():
    cited = cited_keys()
    assert [k for k in bib_keys() if k not in cited] == []


def test_every_citation_has_an_entry():
    keys = set(bib_keys())
    assert {k: sorted(files) for k, files in cited_keys().items() if k not in keys} == {}


def test_the_models_and_data_the_book_names_are_cited():
    cited = cited_keys()
    for key in ("song2020mpnet", "reimers2019sentencebert", "mikolov2013distributed", "bolukbasi2016man",
                "dolan2005mrpc", "dong2019unilm", "wang2020minilm"):
        assert key in cited, key
    chapters = " ".join(p.read_text(encoding="utf-8") for p in (REPO / "notebooks").glob("*.md"))
    assert "Dong et al., 2019" not in chapters  # a citation role, not plain text
