"""The ``cite-and-reproduce`` directive of the Reproducibility appendix: the "Cite and reproduce" box, rendered when the book is
built (version, commit, build date, profile, each chapter's execution time from the run's timings, the command), by
:func:`metricbias.book.reproduction.landing.reproduce_box`. The page is read again on every build, so the box is never
stale."""

from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


class CiteAndReproduce(SphinxDirective):
    has_content = False

    def run(self):
        from metricbias.book.reproduction import landing

        self.env.note_reread()  # the commit, the date and the timings change without the page's source changing
        record = landing.build_record(Path(self.env.srcdir))
        return [nodes.raw("", landing.reproduce_box(record), format="html")]


def setup(app):
    app.add_directive("cite-and-reproduce", CiteAndReproduce)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
