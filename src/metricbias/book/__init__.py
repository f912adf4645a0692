"""The book engine: everything that exists to build the book, on top of the core library.

* executing the chapters: :mod:`.runner` (papermill, ``metricbias run``), :mod:`.chapter_lanes` (``--jobs N``),
  :mod:`.chapter_inputs` (a chapter whose inputs are unchanged is kept), :mod:`.chapter_profiles` (each chapter's
  parameters under each profile);
* score packs: :mod:`.packs` (build, verify, import), :mod:`.pack_plan` (which files a profile ships);
* the trained stand-ins' data and figures: :mod:`.training_data`;
* the commands: :mod:`.cli_book` (``fetch``, ``train``, ``run``, ...) and :mod:`.cli_packs` (``pack``), wired into
  :mod:`metricbias.cli`;
* how a page shows results: :mod:`.display` (tables, downloads, warnings) and :mod:`.plots` (figures);
* :mod:`.reproduction`: the comparisons with the papers and the chapters' tables and sentences, one module per
  paper, chapter or figure.

Layers: the core (every other module of ``metricbias``) imports nothing from here and names no chapter; the engine
imports the core; :mod:`.reproduction` imports both and is imported by neither (``tests/test_import_graph.py``).
"""
