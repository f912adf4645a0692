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
                "dolan2005mrpc", "dong2019unilm", "wang2020minilm",
                # the metrics, the statistics, the optimiser and the data sets the chapters name
                "papineni2002bleu", "lin2004rouge", "doddington2002nist", "popovic2015chrf", "snover2006ter",
                "vedantam2015cider", "kusner2015wmd", "landauer1997lsa", "forgues2014bootstrapping",
                "rus2012comparison", "bonett2000sample", "benjamini2001control", "shapiro1965analysis",
                "loshchilov2019adamw", "williams2018multinli", "mathur2020wmt20metrics", "fellbaum1998wordnet"):
        assert key in cited, key
    chapters = " ".join(p.read_text(encoding="utf-8") for p in (REPO / "notebooks").glob("*.md"))
    assert "Dong et al., 2019" not in chapters  # a citation role, not plain text


def test_the_bibliography_parses_and_every_entry_names_authors_title_year_and_venue():
    """pybtex (what sphinxcontrib-bibtex renders the bibliography with) reads every entry."""
    from pybtex.database import parse_file

    entries = parse_file(str(REPO / "book" / "references.bib"), bib_format="bibtex").entries
    assert sorted(entries) == sorted(bib_keys())
    for key, entry in entries.items():
        assert (entry.persons.get("author") or entry.persons.get("editor")) and entry.fields.get("title"), key
        assert re.fullmatch(r"(19|20)\d\d", entry.fields.get("year", "")), key
        assert {"journal", "booktitle", "eprint", "publisher"} & set(entry.fields), key


def _prose(path: Path) -> str:
    """A page's Markdown without its code cells, citation roles and inline code."""
    text = re.sub(r"```\{code-cell\}.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return re.sub(r"`[^`]*`", "", CITE.sub("", text))


def test_no_page_names_a_work_by_author_and_year_in_plain_text():
    """"Sun et al. (2022)", "(Papineni et al., 2002)" or "Lin 2004" in a page's Markdown is a citation role."""
    from metricbias.book.reproduction.citations import MENTION

    found = {str(p.relative_to(REPO)): [m.group(0) for m in MENTION.finditer(_prose(p))]
             for p in [*(REPO / "notebooks").glob("*.md"), *(REPO / "book").glob("*.md")]}
    assert {page: hits for page, hits in found.items() if hits} == {}
    planted = "As {cite:t}`sun2022bertscore` and Gao & Wan (2022) show (Lin, 2004), `Liu 2024` in code"
    assert [m.group(0) for m in MENTION.finditer(re.sub(r"`[^`]*`", "", CITE.sub("", planted)))] == \
        ["Gao & Wan (2022)", "(Lin, 2004)"]
