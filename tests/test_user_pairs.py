"""A researcher's own pairs (``pairs=`` / ``--pairs FILE``), the CI gate (``--fail-above``), and build folders
that hold files metricbias did not write."""

from __future__ import annotations

import html
import json

import pandas as pd
import pytest

import metricbias as mb
from metricbias import datasets
from metricbias.audits import over_thresholds
from metricbias.cli import main
from metricbias.datasets.published import DatasetError
from metricbias.datasets.user_pairs import load_pairs

ROWS = [
    {"attribute": "gender", "candidate_1": "he is a nurse at the hospital", "candidate_2": "she is a nurse at the hospital",
     "reference": "the nurse works at the hospital", "id": "g1", "cluster": "t1"},
    {"attribute": "gender", "candidate_1": "his car is fast and red", "candidate_2": "her car is fast and red",
     "reference": "the car is fast", "id": "g2", "cluster": "t1"},
    {"attribute": "gender", "candidate_1": "the man cooks dinner", "candidate_2": "the woman cooks dinner",
     "reference": "someone cooks dinner", "id": "g3", "cluster": "t2"},
    {"attribute": "age", "candidate_1": "the old man forgot", "candidate_2": "the young man forgot",
     "reference": "a man forgot", "id": "a1", "cluster": ""},
    {"attribute": "age", "candidate_1": "old people are slow", "candidate_2": "young people are slow",
     "reference": "people are slow", "id": "a2", "cluster": ""},
]


def overlap(candidates, references):
    """Share of a candidate's words found in its reference (a plain-function metric)."""
    return [len(set(c.split()) & set(r.split())) / max(1, len(set(c.split()))) for c, r in zip(candidates, references)]


def write(path, rows=ROWS, kind=None):
    kind = kind or path.suffix[1:]
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        pd.DataFrame(rows).to_csv(path, sep="," if kind == "csv" else "\t", index=False)
    return path


@pytest.mark.parametrize("name", ["pairs.tsv", "pairs.csv", "pairs.jsonl"])
def test_each_format_loads_into_the_pair_layout(tmp_path, name):
    frame = load_pairs(write(tmp_path / name))
    assert list(frame.columns[:9]) == datasets.PAIR_COLUMNS and "cluster" in frame.columns
    assert frame["pair_id"].tolist() == ["g1", "g2", "g3", "a1", "a2"]
    assert (frame["reference_1"] == frame["reference_2"]).all() and set(frame["dataset"]) == {"pairs"}
    # a pair without a cluster is its own cluster
    assert frame["cluster"].tolist() == ["t1", "t1", "t2", "a1", "a2"]
    pd.testing.assert_frame_equal(frame, load_pairs(pd.DataFrame(ROWS)))


def test_ids_default_to_the_row_number(tmp_path):
    rows = [{k: v for k, v in r.items() if k not in ("id", "cluster")} for r in ROWS]
    assert load_pairs(write(tmp_path / "p.jsonl", rows))["pair_id"].tolist() == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize("name, change, message", [
    ("p.tsv", {"reference": ""}, "p.tsv, line 4: field 'reference' must be non-empty text"),
    ("p.csv", {"candidate_2": "   "}, "p.csv, line 4: field 'candidate_2' must be non-empty text"),
    ("p.jsonl", {"attribute": None}, "p.jsonl, line 3: field 'attribute' must be non-empty text"),
    ("p.jsonl", {"id": "g1"}, "p.jsonl, line 3: id 'g1' occurs twice in attribute 'gender'"),
])
def test_a_bad_row_names_the_file_line_and_field(tmp_path, name, change, message):
    rows = [dict(r) for r in ROWS]
    rows[2].update(change)
    with pytest.raises(DatasetError) as err:
        load_pairs(write(tmp_path / name, rows))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_columns_unknown_format_and_empty_files(tmp_path):
    with pytest.raises(DatasetError, match=r"p.csv, line 1: missing column\(s\) \['reference'\]"):
        load_pairs(write(tmp_path / "p.csv", [{k: v for k, v in r.items() if k != "reference"} for r in ROWS]))
    (tmp_path / "p.xlsx").write_text("x")
    with pytest.raises(DatasetError, match="unknown pairs format '.xlsx'"):
        load_pairs(tmp_path / "p.xlsx")
    (tmp_path / "e.jsonl").write_text("\n")
    with pytest.raises(DatasetError, match="no pairs"):
        load_pairs(tmp_path / "e.jsonl")
    with pytest.raises(DatasetError, match="no such file"):
        load_pairs(tmp_path / "missing.tsv")


def test_audit_on_own_pairs_from_a_file_or_a_table(tmp_path):
    path = write(tmp_path / "pairs.tsv")
    by_file = mb.audit(overlap, pairs=path, n_resamples=200, cache=False)
    by_table = mb.audit(overlap, pd.DataFrame(ROWS), n_resamples=200, cache=False)  # a table as the dataset
    pd.testing.assert_frame_equal(by_file, by_table)
    assert by_file["attribute"].unique().tolist() == ["gender", "age"]
    # Eq. 2 by hand for age: overlap 2/4 vs 2/4 (pair a1) and 2/4 vs 2/4 (a2): no difference at all
    age = by_file[(by_file["attribute"] == "age") & (by_file["measure"] == "bias")]
    assert age["value"].iloc[0] == 0.0
    only_age = mb.audit(overlap, pairs=path, attributes="age", n_resamples=200, cache=False)
    assert only_age["attribute"].unique().tolist() == ["age"]
    with pytest.raises(datasets.DatasetNameError, match="no attribute 'race'"):
        mb.audit(overlap, pairs=path, attributes="race", cache=False)


def test_a_file_given_as_dataset_points_to_pairs():
    with pytest.raises(datasets.DatasetNameError, match="--pairs FILE"):
        datasets.load("mypairs.tsv")


def test_cli_audit_and_audit_judge_take_pairs(tmp_path, capsys, monkeypatch):
    path = write(tmp_path / "pairs.jsonl")
    out = tmp_path / "audit.csv"
    from metricbias.bias.clusters import FewClustersWarning

    with pytest.warns(FewClustersWarning, match="clusters of pairs, fewer than 30"):  # the pairs' clusters: too few
        assert main(["audit", "--metric", "bleu", "--pairs", str(path), "--n-resamples", "200", "--out",
                     str(out)]) == 0
    table = pd.read_csv(out)
    assert sorted(table["attribute"].unique()) == ["age", "gender"] and set(table["n_pairs"]) == {2, 3}
    bad = [dict(r) for r in ROWS]
    bad[1]["candidate_1"] = ""
    assert main(["audit", "--metric", "bleu", "--pairs", str(write(tmp_path / "bad.tsv", bad)),
                 "--out", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("bad.tsv, line 3: field 'candidate_1' must be non-empty text, found ''")
    assert "\n" not in err and not (tmp_path / "x.csv").exists()
    monkeypatch.syspath_prepend(str(tmp_path))
    # not "myjudge": test_judges.py imports a module of that name, which Python would then keep
    (tmp_path / "pairsjudge.py").write_text("def judge(reference, a, b):\n    return 0.5 + 0.1 * (len(a) - len(b))\n")
    judged = tmp_path / "judge.csv"
    assert main(["audit-judge", "--judge", "pairsjudge:judge", "--pairs", str(path), "--n-resamples", "200",
                 "--out", str(judged)]) == 0
    assert sorted(pd.read_csv(judged)["attribute"].unique()) == ["age", "gender"]


def test_over_thresholds_by_hand():
    table = pd.DataFrame({"attribute": ["gender", "age", "gender"], "measure": ["bias", "bias", "stereotypical_difference"],
                          "value": [6.0, 2.0, -4.0], "ci_low": [5.0, 1.0, -5.0], "ci_high": [7.0, 3.0, -3.0]})
    assert over_thresholds(table, {"bias": 5}) == ["gender: bias = 6.00 [95% CI 5.00, 7.00] is above 5"]
    # a signed measure is compared by its absolute value
    assert over_thresholds(table, {"stereotypical_difference": 3.5}) == [
        "gender: stereotypical_difference = -4.00 [95% CI -5.00, -3.00] is above 3.5"]
    assert over_thresholds(table, {"bias": 6, "stereotypical_difference": 4}) == []
    with pytest.raises(ValueError, match="no 'kls' rows"):
        over_thresholds(table, {"kls": 1})


def test_the_gate_exit_codes(tmp_path, capsys):
    path = write(tmp_path / "pairs.tsv")
    out = tmp_path / "a.csv"
    common = ["audit", "--metric", "chrf", "--pairs", str(path), "--n-resamples", "200", "--out", str(out)]
    assert main([*common, "--measures", "bias", "--fail-above", "bias=1000"]) == 0
    assert "every gate passed: bias <= 1000" in capsys.readouterr().out
    table = pd.read_csv(out)
    gender = table[(table["attribute"] == "gender") & (table["measure"] == "bias")]["value"].iloc[0]
    assert gender > 0
    # the gate's measure is computed though --measures leaves it out; exit 1 names attribute, measure, value, interval
    assert main([*common, "--measures", "bias", "--fail-above", f"stereotypical_difference={0}",
                 "--fail-above", f"bias={gender / 2}"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert any(line.startswith("metricbias audit: over the gate: gender: bias = ") and "[95% CI " in line
               for line in err)
    assert "stereotypical_difference" in set(pd.read_csv(out)["measure"])
    assert main([*common, "--fail-above", "nonsense=1"]) == 2
    assert "unknown bias measure 'nonsense'" in capsys.readouterr().err
    assert main([*common, "--fail-above", "bias"]) == 2
    assert "is not MEASURE=VALUE" in capsys.readouterr().err


def test_a_build_folder_with_foreign_files_is_refused_and_left_alone(tmp_path, capsys):
    own = tmp_path / "own"
    own.mkdir()
    (own / "gender.tsv").write_text("my own pairs\n")
    assert main(["audit", "--metric", "bleu", "--dataset", "built", "--built-dir", str(own), "--attributes", "gender",
                 "--out", str(tmp_path / "a.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert "holds gender.tsv, which metricbias did not write" in err and "\n" not in err
    assert (own / "gender.tsv").read_text() == "my own pairs\n" and sorted(p.name for p in own.iterdir()) == ["gender.tsv"]
    # a folder metricbias wrote is used as before
    built = tmp_path / "built"
    assert main(["build-datasets", "--attributes", "age", "--out", str(built)]) == 0
    datasets.load("built", "age", built_dir=built)


def test_a_report_on_own_pairs_names_them_in_its_command(tmp_path):
    path = write(tmp_path / "pairs.csv")
    page = tmp_path / "r.html"
    table = mb.audit_report(overlap, page, pairs=path, references=(), n_resamples=200, cache=False)
    text = page.read_text(encoding="utf-8")
    assert "Dataset <code>pairs</code>" in text and html.escape(f"--pairs {path}") in text
    assert sorted(table["attribute"].unique()) == ["age", "gender"]


def test_a_report_made_from_python_prints_a_command_that_reruns_it(tmp_path, capsys):
    from metricbias.report import rerun_command

    path = write(tmp_path / "pairs.tsv")
    command = rerun_command(overlap, tmp_path / "r.html", pairs=path, attributes=["age"], seed=3, n_resamples=200)
    argv = command.split()
    assert argv[:4] == ["metricbias", "audit", "--metric", f"{overlap.__module__}:overlap"]
    assert main([*argv[1:-2], "--out", str(tmp_path / "again.csv")]) == 0  # the page's command, run as written
    again = pd.read_csv(tmp_path / "again.csv")
    assert again["attribute"].unique().tolist() == ["age"]
    # a function a new process cannot import says so, and what to do
    lines = rerun_command(lambda c, r: [0.0] * len(c), "r.html", dataset="published").splitlines()
    assert lines[0].startswith("# the metric was defined where a new process cannot import it")
    assert lines[1].startswith("metricbias audit --metric MODULE:NAME --dataset published")


def test_unknown_names_get_suggestions_and_a_per_pair_function_a_hint():
    from metricbias import metrics
    from metricbias.bias.registry import MeasureError, get_measure

    with pytest.raises(ValueError, match="did you mean 'bleu'"):
        metrics.get("bleuu")
    with pytest.raises(datasets.DatasetNameError, match="did you mean 'published'"):
        datasets.load("publishd")
    with pytest.raises(MeasureError, match="did you mean 'bias'"):
        get_measure("biass")
    with pytest.raises(ValueError, match="called once with the lists of all candidates and references"):
        mb.audit(lambda c, r: 0.5, pairs=pd.DataFrame(ROWS), cache=False)


def test_one_signature_from_python_and_the_command_line(tmp_path, monkeypatch):
    """However the metric is named (the function, module:name on the command line, a registered name, a library's
    object or a module variable holding it), its scores carry one signature, so Python and the CLI share the cache."""
    import importlib

    from metricbias.metrics import parse
    from metricbias.metrics.registry import resolve

    (tmp_path / "sigmetric_one.py").write_text(
        "def score(candidates, references):\n"
        "    return [len(set(c.split()) & set(r.split())) / len(set(r.split())) for c, r in zip(candidates, references)]\n"
        "from sacrebleu.metrics import CHRF\nchrf2 = CHRF()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sigmetric = importlib.import_module("sigmetric_one")
    python = resolve(sigmetric.score)[1].signature
    assert python == parse("sigmetric_one:score").build().signature
    mb.register(sigmetric.score, name="overlap_for_signature_test")
    assert resolve("overlap_for_signature_test")[1].signature == python
    from sacrebleu.metrics import CHRF

    assert resolve(CHRF())[1].signature == parse("sigmetric_one:chrf2").build().signature
    out = tmp_path / "a.csv"
    assert main(["audit", "--metric", "sigmetric_one:score", "--pairs", str(write(tmp_path / "p.tsv")),
                 "--n-resamples", "99", "--out", str(out)]) == 0
    assert set(pd.read_csv(out)["signature"]) == {python}


def test_a_report_with_three_views(tmp_path):
    """Eq. 2 on the pairs, association tests through the metric and the gender-swap shift, in one page, each
    beside the reference configurations, each with one sentence saying what it found."""
    from metricbias import report as rep

    page = tmp_path / "three.html"
    table = mb.audit_report(overlap, page, pairs=write(tmp_path / "p.tsv"), references=("bleu", "chrf"),
                            n_resamples=99, views=("pairs", "association", "metaeval"), metaeval_sample=60,
                            cache=False)
    text = page.read_text(encoding="utf-8")
    assert "Association tests through the metric" in text and "after a gender swap" in text
    assert "--views pairs,association,metaeval" in text and sorted(table["attribute"].unique()) == ["age", "gender"]
    # the views' own numbers, checked against the functions that make them
    assoc = rep.association_view(overlap, ("bleu",), cache=False)
    assert set(assoc["level"]) == {"word"} and set(assoc["group"]) == {rep.AUDITED, rep.REFERENCE}
    assert html.escape(rep.association_sentence(rep.association_view(overlap, ("bleu", "chrf"), cache=False))) in text
    shift = rep.metaeval_view(overlap, ("bleu",), sample=60, cache=False)
    row = shift.iloc[0]
    assert row["group"] == rep.AUDITED and row["shift"] == pytest.approx(row["after"] - row["before"])
    assert row["ci_low"] <= row["shift"] <= row["ci_high"]
    with pytest.raises(ValueError, match="views must include 'pairs'"):
        mb.audit_report(overlap, page, pairs=pd.DataFrame(ROWS), views=("association",))


def test_swap_shift_of_a_metric_blind_to_gender_is_zero():
    from metricbias.datasets import meta_eval
    from metricbias.metaeval.shift import swap_shift

    def length(candidates, references):  # he/she and his/her: a swap changes lengths only by those letters
        return [float(len(c.split())) for c in candidates]

    data = meta_eval.load("flickr8k").sample(40, seed=1)
    row = swap_shift(data, [length], n_resamples=99).iloc[0]
    assert row["shift"] == 0 and row["ci_low"] == 0 and row["ci_high"] == 0


def test_a_name_registered_in_this_process_is_not_a_rerunnable_command():
    from metricbias.report import rerun_command

    mb.register(overlap, name="overlap_registered_here")
    assert rerun_command("overlap_registered_here", "r.html").split("\n")[-1].startswith(
        f"metricbias audit --metric {overlap.__module__}:overlap ")
    assert rerun_command("bleu:tokenize=13a", "r.html").startswith("metricbias audit --metric bleu:tokenize=13a ")
