"""The Reproducibility appendix's records (metricbias.book.records): what a chapter keeps there instead of showing
it, and how the appendix shows it."""

import json

import pandas as pd
import pytest

from metricbias.book import records, runner


@pytest.fixture
def record_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path))
    records._current.clear()
    yield tmp_path
    records._current.clear()


def test_a_chapter_keeps_its_parameters_command_and_entries_and_links_in_one_line(record_dir):
    link = records.start("05_association_tests", "smoke", {"seed": 0, "tests": "all"},
                         {"seed": "the permutation seed"}, "metricbias run --only 05 --profile smoke")
    assert 'href="A3_reproducibility.html#repro-05"' in link.data and "chapter 5" in link.data
    assert records.keep("Timings", pd.DataFrame({"metric": ["BLEU"], "seconds": [1.5]}), formats={"seconds": 1}) is None
    records.keep("Warnings", "")  # no warning: said, not an empty Markdown
    records.keep("Timings", pd.DataFrame({"metric": ["chrF"], "seconds": [2.0]}))  # the same title replaces
    record = records.load("05_association_tests", "smoke")
    assert record["command"] == "metricbias run --only 05 --profile smoke"
    assert record["parameters"][0] == {"parameter": "seed", "value": "0", "meaning": "the permutation seed"}
    assert record["parameters"][1]["value"] == "all"
    assert [e["title"] for e in record["entries"]] == ["Warnings", "Timings"]
    assert record["entries"][0]["text"] == "None."
    assert record["entries"][1]["rows"] == [["chrF", 2.0]]
    # a rerun starts the record afresh
    records.start("05_association_tests", "smoke", {}, {}, "x")
    assert records.load("05_association_tests", "smoke")["entries"] == []
    assert records.load("05_association_tests", "offline") is None


def test_parameter_values_read_as_words_not_python_reprs():
    assert [records.value_word(v) for v in ("offline", None, True, False, 9999, "20,40,80")] == [
        "offline", "none", "yes", "no", "9999", "20,40,80"]
    # a record of an earlier run kept the repr: it reads the same
    assert [records.value_word(v) for v in ("'offline'", "None", "False", "0")] == ["offline", "none", "no", "0"]
    assert records.value_word([20, 40, 80]) == records.value_word("[20, 40, 80]") == "20, 40, 80"
    assert records.value_word(["gender", "race"]) == "gender, race" and records.value_word("[x") == "[x"
    assert records._meaning("attributes to compare (None: all)") == "attributes to compare (none: all)"


def test_appendices_keep_a_record_but_show_no_link(record_dir):
    assert records.start("A1_using_metricbias", "smoke", {}, {}, "x") is None


def test_outside_the_runner_an_entry_is_shown_in_place(record_dir, monkeypatch):
    shown = []
    monkeypatch.setattr(records, "_display", shown.append)
    records.keep("Timings", "It took 3 s.")
    assert shown == [{"title": "Timings", "kind": "text", "text": "It took 3 s."}]
    assert not (record_dir / "run").exists()


def test_a_multiindex_table_is_kept_with_word_headers(record_dir):
    records.start("04_bias_measures", "smoke", {}, {}, "x")
    frame = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("bias", "low"), ("bias", "high")]))
    records.keep("Grid", frame)
    assert records.load("04_bias_measures", "smoke")["entries"][0]["columns"] == ["bias low", "bias high"]


def test_a_corrupt_record_is_one_line_and_other_content_is_refused(record_dir):
    records.start("01_published_reproduction", "smoke", {}, {}, "x")
    with pytest.raises(TypeError, match="a DataFrame, a matplotlib figure or a Markdown string"):
        records.keep("Bad", 3)
    path = records.records_dir("smoke") / "01_published_reproduction.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not a chapter record"):
        records.load("01_published_reproduction", "smoke")


def test_the_appendix_shows_every_chapter_and_runs_after_them():
    stems = [c.stem for c in runner.chapters()]
    assert stems[-1] == records.APPENDIX_STEM
    page = next(c for c in runner.chapters() if c.stem == records.APPENDIX_STEM).source.read_text()
    assert page.splitlines()[page.splitlines().index("---", 1) + 2].startswith("# Reproducibility")
    for stem in stems:
        if stem[:1].isdigit():
            assert f"({records.anchor(stem)})=" in page and f'records.show("{stem}", profile)' in page, stem


def test_the_runner_starts_each_chapter_record_instead_of_a_parameters_box():
    chapter = runner.select(runner.chapters(), "09")[0]
    nb, values = runner.prepare(chapter, "smoke")
    box = next(c for c in nb.cells if "_records.start" in c.source)
    assert "'09_metric_users', 'smoke'" in box.source and "remove-input" in box.metadata["tags"]


def test_a_figure_is_kept_as_a_png_beside_the_downloads(record_dir, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from metricbias.book import display

    monkeypatch.setattr(display, "downloads_dir", lambda: record_dir / "static")
    records.start("04_bias_measures", "smoke", {}, {}, "x")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    records.keep("Vector BCM", fig, caption="A secondary figure.")
    entry = records.load("04_bias_measures", "smoke")["entries"][0]
    assert entry == {"title": "Vector BCM", "kind": "figure", "caption": "A secondary figure.",
                     "file": "04_bias_measures-vector-bcm.png"}
    assert (record_dir / "static" / entry["file"]).stat().st_size > 1000


def _shown(monkeypatch) -> list:
    import IPython.display

    out = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: out.append(getattr(obj, "data", obj)))
    monkeypatch.setattr(records, "_display", out.append)
    return out


def test_a_record_shows_its_rerun_line_time_and_score_sources_table(record_dir, monkeypatch):
    records.start("08_trust", "smoke", {"seed": 0}, {"seed": "the seed"}, "metricbias run --only 08 --profile smoke")
    records._current.clear()
    packs = {"scores": 1200, "from_packs": 900, "computed": 300, "checked": 45, "max_diff": 2.3e-05}
    records.timings_path().parent.mkdir(parents=True, exist_ok=True)
    records.timings_path().write_text(json.dumps({"smoke": {"08_trust": {
        "seconds": 33.4, "finished": "2026-11-29 08:51:55", "jobs": [], "packs": packs}}}))
    shown = _shown(monkeypatch)
    records.show("08_trust", "smoke")
    assert shown[0] == "Rerun: `metricbias run --only 08 --profile smoke`. Change a parameter with `-p name=value`."
    assert shown[2] == "Executed in 33 s (finished 2026-11-29 08:51:55)."
    sources = shown[3]
    assert sources["title"] == "Score sources" and sources["rows"] == [[1200, 900, 300, 45, 2.3e-05]]
    assert sources["columns"][1] == "read from verified score packs"


def test_a_chapter_without_a_record_says_how_to_make_one(record_dir, monkeypatch):
    shown = _shown(monkeypatch)
    records.show("05_association_tests", "smoke")
    assert shown == ["Chapter `05_association_tests` has no record under profile `smoke`: run "
                     "`metricbias run --only 05 --profile smoke`, then this appendix."]
