"""The SEAT/WEAT test files, Gao & Wan's test names, malformed files, and ``metricbias weat``."""

import json

import numpy as np
import pandas as pd
import pytest

from conftest import write_registry
from metricbias import metrics, sources
from metricbias.bias import association
from metricbias.cli import main
from metricbias.datasets import seat
from metricbias.datasets.published import DatasetError
from metricbias.metrics.base import Metric

GOOD = {
    "targ1": {"category": "MaleNames", "examples": ["John", "Paul"]},
    "targ2": {"category": "FemaleNames", "examples": ["Amy", "Joan"]},
    "attr1": {"category": "Career", "examples": ["executive", "salary", "office"]},
    "attr2": {"category": "Family", "examples": ["home", "parents"]},
}


def test_every_test_of_table3_maps_to_a_registered_file():
    pairs = seat.select("all")
    assert len(pairs) == 38  # 18 tests × (word, sent) + the two unbleached Double Binds
    assert [n for n, lv in pairs if lv == "sent (u)"] == ["DB:C", "DB:L"]
    assert "C9" not in seat.TESTS  # left out, as in the paper
    registered = sources.registry()
    for name, level in pairs:
        assert seat.file_of(name, level) in registered


def test_real_files_load_with_the_expected_sets():
    c6 = seat.load("C6-N", "word")
    assert c6.source == "seat/weat6.jsonl"
    assert c6.categories == ("MaleNames", "FemaleNames", "Career", "Family")
    assert c6.x[:2] == ("John", "Paul") and c6.b[-1] == "relatives" and len(c6.targets) == 16
    abw = seat.load("ABW-T", "sent")
    assert abw.categories[:2] == ("WhiteFemaleTerms", "BlackFemaleTerms") and len(abw.x) == len(abw.y) == 52
    db = seat.load("DB:C", "sent (u)")
    assert db.x[0] == "John is an engineer." and db.a[0] == "The engineer is competent."
    table = seat.overview(seat.tests("C7-T,C7-N", "word"))
    assert table[["test", "A", "B"]].values.tolist() == [["C7-T", "MaleTerms", "FemaleTerms"],
                                                           ["C7-N", "MaleNames", "FemaleNames"]]


def test_selection_errors_name_the_choices():
    with pytest.raises(ValueError, match="unknown association test\\(s\\) \\['C9'\\]; known: ABW-T"):
        seat.select("C1,C9")
    with pytest.raises(ValueError, match="unknown level\\(s\\) \\['para'\\]"):
        seat.select("C1", "para")
    with pytest.raises(ValueError, match="have none of the levels"):
        seat.select("C1", "sent (u)")
    assert seat.select("DB:L,C1", "word,sent (u)") == [("DB:L", "word"), ("DB:L", "sent (u)"), ("C1", "word")]


@pytest.mark.parametrize("content, message", [
    ('{\n  "targ1": {"category": "M", "examples": ["a"]},\n  "targ2": oops\n}', "line 3: not valid JSON"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "attr2"}), "missing key 'attr2'"),
    (json.dumps({**GOOD, "targ2": {"category": "F", "examples": ["Amy"]}}), "targ1 has 2 examples but targ2 has 1"),
    (json.dumps({**GOOD, "attr1": {"category": "C", "examples": ["x", "  "]}}), "key 'attr1', example 1"),
    (json.dumps({**GOOD, "attr1": ["x"]}), "key 'attr1': expected"),
    (json.dumps([GOOD]), "expected one JSON object"),
])
def test_malformed_files_name_the_file_and_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError, match=f"bad.jsonl.*{message}"):
        seat.read(path)


def test_a_malformed_registered_file_is_named_by_its_registry_path(tmp_project):
    blob = json.dumps({**GOOD, "targ2": {"category": "F", "examples": ["Amy"]}}).encode()
    write_registry(tmp_project, {"seat/weat6.jsonl": blob})
    (tmp_project / "data" / "raw" / "seat").mkdir(parents=True)
    (tmp_project / "data" / "raw" / "seat" / "weat6.jsonl").write_bytes(blob)
    with pytest.raises(DatasetError, match="^seat/weat6.jsonl: targ1 has 2 examples but targ2 has 1"):
        seat.load("C6-N", "word")


class FirstLetter(Metric):
    """Toy metric: 1 when candidate and reference start with the same letter, else 0.25 (asymmetric: + len/100)."""

    name = "toy_first_letter"
    family = "ngram"

    def _score(self, candidates, references):
        return np.array([(1.0 if c[0].lower() == r[0].lower() else 0.25) + len(c) / 100
                         for c, r in zip(candidates, references)])


def test_cli_writes_exactly_the_documented_columns(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    metrics.register(FirstLetter)  # a user's metric, used by name from the command line
    monkeypatch.setattr("metricbias.metrics.registry._REGISTERED", {"toy_first_letter": FirstLetter})
    out = tmp_path / "weat.csv"
    assert main(["weat", "--test", "C6-N,DB:C", "--level", "word", "--metric", "toy_first_letter",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out)
    documented = list(association.COLUMNS)
    documented.insert(documented.index("p_value") + 1, "p_value_is_upper_bound")  # as appendix A2 lists them
    assert list(table.columns) == documented
    assert table[["test", "level", "metric", "n_targets", "n_attributes"]].values.tolist() == [
        ["C6-N", "word", "toy_first_letter", 16, 16], ["DB:C", "word", "toy_first_letter", 16, 20]]
    assert table["signature"].str.startswith("metric:toy_first_letter|direction:higher|version:").all()
    assert table["p_value"].between(0, 1).all() and np.isfinite(table["effect_size"]).all()
    # the same numbers as the library (the CLI is one code path with it)
    lib = association.run(seat.tests("C6-N,DB:C", "word"), FirstLetter(), cache=None)
    np.testing.assert_allclose(table["effect_size"], lib["effect_size"])
    np.testing.assert_allclose(table["p_value"], lib["p_value"])


def test_cli_errors_leave_no_output(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "weat.csv"
    assert main(["weat", "--test", "C11", "--metric", "bleu", "--out", str(out)]) == 2
    assert "unknown association test(s) ['C11']" in capsys.readouterr().err
    assert main(["weat", "--test", "C1", "--metric", "blue", "--out", str(out)]) == 2
    assert "unknown metric 'blue'" in capsys.readouterr().err
    assert not out.exists()


def test_subsample_keeps_templates_balanced_and_is_seeded():
    full = seat.load("C6-N", "sent")
    small = seat.subsample(full, 10, seed=0)
    assert (len(small.x), len(small.y), len(small.a), len(small.b)) == (10, 10, 10, 10)
    # the same positions of X and Y: the same templates, with a male and a female name
    for x, y in zip(small.x, small.y):
        assert full.x.index(x) == full.y.index(y)
    assert set(small.a) <= set(full.a) and set(small.b) <= set(full.b)  # |A| = 101, |B| = 112: drawn apart
    c8 = seat.load("C8-T", "sent")  # |A| = |B| = 80: brother/sister sentences, same templates
    paired = seat.subsample(c8, 12)
    assert [c8.a.index(a) for a in paired.a] == [c8.b.index(b) for b in paired.b]
    assert seat.subsample(full, 10, seed=0) == small and seat.subsample(full, 10, seed=1) != small
    assert seat.subsample(full, 0) == full
    word = seat.load("C6-N", "word")
    assert seat.subsample(word, 8) == word  # sets no larger than the sample are kept whole
    # word-level tests are never drawn down
    assert [len(t.x) for t in seat.tests("C1,C6-N", "word,sent", sample_size=20)] == [25, 20, 8, 20]


def test_cli_bleu_is_a_null_control_on_every_word_level_test(tmp_path, monkeypatch):
    # no target shares a word with an attribute, so every S(t, a) is BLEU's no-match score:
    # r is constant, d undefined (an empty cell) and every partition ties (p = 1)
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "bleu.csv"
    with pytest.warns(association.ConstantAssociationWarning):
        assert main(["weat", "--test", "all", "--level", "word", "--metric", "bleu", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert len(table) == 18 and table["effect_size"].isna().all() and (table["p_value"] == 1.0).all()
    assert table["signature"].str.startswith("metric:bleu|").all()
