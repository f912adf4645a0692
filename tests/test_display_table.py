"""display.table: human column headers, per-column number formats, captions with code set as code; display.figure."""

import pandas as pd

from metricbias.book import display


def test_table_heads_columns_with_labels_and_formats_each_column():
    frame = pd.DataFrame({"metric": ["BLEU", "ROUGE-1"], "eq2": [1.234, -0.001], "kls": [50.0, 61.24],
                          "litepyramid_recall": [0.5, 0.25], "p_value": [0.012345, 0.5],
                          "paper_metric": ["BLEU", "ROUGE"], "eq2 (paper)": [1.2, 0.1]})
    html = display.table(frame, formats={"kls": 1}, caption="Bias with `metricbias bias`, a <b> tag").to_html()
    heads = [display.label(c) for c in frame.columns]
    assert heads == ["metric", "Eq. 2", "KLS", "LitePyramid recall", "p", "paper metric", "Eq. 2 (paper)"]
    for head in heads:
        assert f">{head}</th>" in html
    assert ">eq2<" not in html and ">litepyramid_recall<" not in html
    assert ">1.23<" in html and ">0.00<" in html and ">-0.00<" not in html  # the default two decimals, no -0.00
    assert ">61.2<" in html and ">50.0<" in html  # the chapter's own format wins over the default
    assert ">0.012<" in html and ">0.5<" in html  # p: two significant digits (FORMATS)
    assert "<code>metricbias bias</code>" in html and "`" not in html and "&lt;b&gt;" in html


def test_figure_glues_the_figure_under_its_name_and_closes_it(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import myst_nb

    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: calls.append((name, value, display)))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    display.figure("fig-ch0-line")  # the current figure
    assert calls == [("fig-ch0-line", fig, False)] and not plt.fignum_exists(fig.number)


def test_a_multiindex_header_becomes_one_row_of_word_headers():
    """significance.interval_columns gives (measure, value / CI low / CI high) columns under a named row index:
    the page shows one header row of words, never the tuples' characters ("( | ( |")."""
    from metricbias.bias import significance

    intervals = pd.DataFrame({"metric": ["BLEU", "BLEU", "ROUGE", "ROUGE"], "measure": ["eq2", "mwu"] * 2,
                              "value": [0.105, 0.01, 0.212, 0.02], "ci_low": [0.0, 0.0, 0.1, 0.0],
                              "ci_high": [0.37, 0.03, 0.96, 0.05]})
    wide = significance.interval_columns(intervals, labels={"eq2": "Eq. 2"})
    assert isinstance(wide.columns, pd.MultiIndex)
    html = display.table(wide, significant=3).to_html()
    heads = [h.strip() for h in __import__("re").findall(r"<th[^>]*>([^<]*)</th>", html)]
    assert heads == ["metric", "Eq. 2", "Eq. 2 CI low", "Eq. 2 CI high", "MWU", "MWU CI low", "MWU CI high"]
    assert "level1" not in html and ">0.212<" in html and ">0.96<" in html


def test_identifiers_inside_a_header_of_words_are_labelled():
    assert display.label("effect_size full") == "d full" and display.label("p_value sampled") == "p sampled"
    assert display.label("n_targets full") == "n targets full" and display.label("share changed") == "share changed"
    assert display.label(("eq2", "ci_low")) == "Eq. 2 95% CI low" and display.label(("metric", "")) == "metric"


def test_a_tall_figure_is_shown_no_taller_than_a_screen(monkeypatch):
    """A figure whose page PNG (IPython's: tight bounding box, the figure's dpi) would pass 816 px gets a lower dpi;
    a short one keeps its own."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import myst_nb
    from IPython.core.pylabtools import print_figure
    from PIL import Image

    from metricbias.book import plots

    shown = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: shown.append(
        Image.open(io.BytesIO(print_figure(value, "png")))))
    for inches in (12, 3):  # 12 inches at 100 dpi: about 1,200 px
        fig, ax = plt.subplots(figsize=(5, inches), dpi=100)
        ax.barh(range(40), range(40))
        ax.set_title("a tall figure")
        display.figure("fig-ch0-tall", fig)
    tall, short = shown
    assert plots.MAX_HEIGHT_PX - 20 <= tall.size[1] <= plots.MAX_HEIGHT_PX
    assert 250 <= short.size[1] <= 320 and round(short.info["dpi"][0]) == 100
