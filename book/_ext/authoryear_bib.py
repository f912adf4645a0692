"""Bibliography labels in author-year style ("Sun et al., 2022"), matching the book's author-year citations.

sphinxcontrib-bibtex's default styles label entries alphabetically ("[LLukenGlavavs21]"); this registers a
pybtex formatting style ``authoryear`` (unsrt formatting, sorted by author and year) whose labels are the
first author's surname ("et al." for three or more authors), a comma and the year, as the citations print them.
"""

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle


def _surname(person) -> str:
    # rich names render LaTeX accents ("Glava{\\v{s}}" -> "Glavaš")
    return " ".join(part.render_as("text") for part in person.rich_prelast_names + person.rich_last_names)


def label(entry) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_surname(p) for p in people]
    if not names:
        who = entry.fields.get("organization") or entry.fields.get("title", "Anon.")
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"  # as the citations print it


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        labels = [label(entry) for entry in sorted_entries]
        seen = {}
        for text in labels:
            if labels.count(text) == 1:
                yield text
            else:  # two works of the same authors and year: 2021a, 2021b
                seen[text] = seen.get(text, 0) + 1
                yield f"{text}{chr(ord('a') + seen[text] - 1)}"


class AuthorYearStyle(UnsrtStyle):
    default_label_style = AuthorYearLabels
    default_sorting_style = SortingStyle


def setup(app):
    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
