"""display.glue_findings: numbers glued as they are, texts as Markdown, every key prefixed."""

import myst_nb
from IPython.display import Markdown

from metricbias.book import display
from metricbias.book.reproduction import names


def test_glue_findings_prefixes_keys_and_glues_texts_as_markdown(monkeypatch):
    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: calls.append((name, value, display)))
    display.glue_findings({"cells": 174, "share": 0.09, "list": "ROUGE (5), NIST (5)", "empty": ""}, "ch4_")
    names = [c[0] for c in calls]
    assert names == ["ch4_cells", "ch4_share", "ch4_list", "ch4_empty"]
    assert calls[0][1] == 174 and calls[1][1] == 0.09 and not any(c[2] for c in calls)
    assert isinstance(calls[2][1], Markdown) and calls[2][1].data == "ROUGE (5), NIST (5)"
    assert isinstance(calls[3][1], Markdown) and calls[3][1].data == ""


def test_counted_puts_the_noun_in_the_number_of_the_count():
    from metricbias.book import display

    assert names.counted(1, "built pair") == "1 built pair"
    assert names.counted(1234, "pair") == "1,234 pairs"
    assert names.counted(0, "finding") == "no findings"
    assert names.counted(2, "attribute") == "2 attributes"
    assert names.counted(3, "cell", zero="none") == "3 cells"


def test_glue_findings_takes_every_string_as_text(monkeypatch, tmp_path):
    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True: glued.update({key: value}))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes").mkdir()
    display.glue_findings({"empty": "", "folder": "notes", "sentence": "Two *words*."}, "x_")
    assert [glued[k].data for k in ("x_empty", "x_folder", "x_sentence")] == ["", "notes", "Two *words*."]
    assert all(isinstance(v, Markdown) for v in glued.values())


def test_glue_all_glues_numpy_scalars_as_python_numbers(monkeypatch):
    """MyST-NB formats ``{glue:text}`key:+.3f``` from the plain-text repr; np.float64's repr is not a number."""
    import numpy as np

    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: calls.append((name, value)))
    display.glue_all({"d": np.float64(-0.3125), "n": np.int64(7), "w": "below 0"}, "ch3_x_")
    assert calls == [("ch3_x_d", -0.3125), ("ch3_x_n", 7), ("ch3_x_w", "below 0")]
    assert type(calls[0][1]) is float and type(calls[1][1]) is int and repr(calls[0][1]) == "-0.3125"
    calls.clear()  # glue_findings, the other way numbers reach a page, the same
    display.glue_findings({"d": np.float64(0.5)}, "ch4_")
    assert calls == [("ch4_d", 0.5)] and type(calls[0][1]) is float
