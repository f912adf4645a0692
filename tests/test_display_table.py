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
