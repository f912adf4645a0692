"""How the Reproducibility appendix shows one chapter's record (metricbias.book.records.show): the rerun line, the
run's time, and the sources of its scores as a table, not a sentence."""

import json

import pytest

from metricbias.book import records


@pytest.fixture
def record_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path))
    records._current.clear()
    yield tmp_path
    records._current.clear()


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
