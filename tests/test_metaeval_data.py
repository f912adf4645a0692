"""Meta-evaluation loaders: the generic JSONL format (and its errors) and the three mirrored sets."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metricbias.book.reproduction import notes
from metricbias.datasets import meta_eval
from metricbias.datasets.meta_eval import DatasetError
from tests.conftest import real_raw_location

GOOD = [
    {"item_id": "d1", "system_id": "A", "hypothesis": "A man rides a horse.", "references": ["A man on a horse.", "A rider."],
     "human": {"overall": 4, "fluency": 3.5}},
    {"item_id": "d1", "system_id": "B", "hypothesis": "A dog.", "references": ["A man on a horse.", "A rider."],
     "human": {"overall": 1, "fluency": 4}},
    {"item_id": 2, "system_id": "C", "hypothesis": "Her horse runs.", "references": ["A horse runs."],
     "human": {"fluency": 2, "overall": 2.5}},
]


def write_lines(path, lines):
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines))
    return path


def test_jsonl_loads(tmp_path):
    ds = meta_eval.load(str(write_lines(tmp_path / "mine.jsonl", GOOD)))
    assert ds.name == "mine" and len(ds) == 3
    assert ds.aspects == ["overall", "fluency"]
    assert ds.frame["item_id"].tolist() == ["d1", "d1", "2"]
    assert ds.frame["references"][0] == ("A man on a horse.", "A rider.")
    assert ds.human("overall").tolist() == [4.0, 1.0, 2.5]
    assert ds.levels == ("example", "system")
    with pytest.raises(DatasetError, match="no human aspect 'clarity'"):
        ds.human("clarity")


def test_jsonl_roundtrip(tmp_path):
    ds = meta_eval.load_jsonl(write_lines(tmp_path / "a.jsonl", GOOD))
    again = meta_eval.load_jsonl(meta_eval.write_jsonl(ds, tmp_path / "b.jsonl"))
    assert again.frame.equals(ds.frame)


@pytest.mark.parametrize("bad, message", [
    ('{"item_id": "d9", "system_id": "A", "hypothesis": "x"', "not valid JSON"),
    ('["a", "b"]', "expected a JSON object"),
    ({"item_id": "d9", "system_id": "A", "references": ["r"], "human": {"overall": 1, "fluency": 1}},
     r"missing key\(s\) \['hypothesis'\]"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": " ", "references": ["r"], "human": {"overall": 1, "fluency": 1}},
     "hypothesis must be a non-empty string"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": "h", "references": "r", "human": {"overall": 1, "fluency": 1}},
     "references must be a non-empty list"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": "h", "references": ["r", ""], "human": {"overall": 1, "fluency": 1}},
     "references must be a non-empty list of non-empty strings"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": "h", "references": ["r"], "human": {"overall": "good", "fluency": 1}},
     "human score for 'overall' must be a finite number"),
    ({"item_id": "d9", "system_id": "A", "hypothesis": "h", "references": ["r"], "human": {"overall": 1}},
     "aspects \\['overall'\\] differ from the first line's"),
    ({"item_id": None, "system_id": "A", "hypothesis": "h", "references": ["r"], "human": {"overall": 1, "fluency": 1}},
     "item_id must be a non-empty string or an integer"),
])
def test_jsonl_malformed_line_names_file_and_line(tmp_path, bad, message):
    path = write_lines(tmp_path / "judged.jsonl", [GOOD[0], GOOD[1], "", bad])
    with pytest.raises(DatasetError, match=rf"judged.jsonl, line 4: {message}"):
        meta_eval.load_jsonl(path)


def test_jsonl_file_level_errors(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        meta_eval.load_jsonl(tmp_path / "missing.jsonl")
    with pytest.raises(DatasetError, match="the file is empty"):
        meta_eval.load_jsonl(write_lines(tmp_path / "empty.jsonl", []))
    with pytest.raises(DatasetError, match=r"\(d1, A\) occurs twice"):
        meta_eval.load_jsonl(write_lines(tmp_path / "dup.jsonl", [GOOD[0], GOOD[0]]))
    with pytest.raises(DatasetError, match="unknown meta-evaluation dataset 'flickr30k'"):
        meta_eval.load("flickr30k")


def test_swapped_set_keeps_human_scores_and_reports(tmp_path):
    ds = meta_eval.load_jsonl(write_lines(tmp_path / "a.jsonl", GOOD))
    sw = ds.swapped()
    assert sw.frame["hypothesis"].tolist() == ["A woman rides a horse.", "A dog.", "His horse runs."]
    assert sw.frame["references"][0] == ("A woman on a horse.", "A rider.")
    assert np.array_equal(sw.human("overall"), ds.human("overall"))
    assert sw.swap_report["where"].tolist() == ["hypothesis 0", "hypothesis 2", "reference 0 of hypothesis 0"]
    assert ds.frame["hypothesis"][0] == "A man rides a horse."  # the original is untouched


@pytest.fixture(scope="module")
def real_data():
    real_raw_location()  # skips without raw data


def test_flickr8k(real_data):
    ds = meta_eval.load_flickr8k()
    assert len(ds) == 5822 and ds.frame["item_id"].nunique() == 1000
    assert ds.frame["references"].map(len).eq(5).all()
    assert ds.levels == ("example",) and ds.aspects == ["overall"]
    first = ds.frame.iloc[1]
    assert first["hypothesis"] == "A girl wearing a yellow shirt and sunglasses smiles."
    assert (first["judge_1"], first["judge_2"], first["judge_3"]) == (1, 1, 2)
    assert first["human:overall"] == pytest.approx(4 / 3)
    assert "A blond woman is on the street hailing a taxi." in first["references"]
    assert len(ds.sample(10, seed=1).frame["item_id"].unique()) == 10


def test_realsumm(real_data):
    ds = meta_eval.load_realsumm()
    assert len(ds) == 2400 and ds.frame["item_id"].nunique() == 100 and ds.frame["system_id"].nunique() == 24
    assert ds.levels == ("system",) and ds.aspects == ["litepyramid_recall"]
    assert ds.frame["references"].map(len).eq(1).all()
    assert ds.human("litepyramid_recall").min() >= 0 and ds.human("litepyramid_recall").max() <= 1


def test_wmt19_darr(real_data):
    ds = meta_eval.load("wmt19-kk-en")
    assert len(ds) == 9728 and ds.levels == ("pairs",)
    row = ds.frame.iloc[0]
    assert row["better_system"] == "CUNI-T2T-transfer-kken.6436" and row["worse_system"] == "UMD.6736"
    assert row["reference"].startswith("A mobile surgery unit")


# --- bring your own relative-ranking set: the pair JSONL format and WMT DARR pickles -------------------------
PAIRS = [
    {"item_id": "s1", "reference": "The cat sat.", "better": "The cat sat down.", "worse": "A dog.",
     "better_system": "A", "worse_system": "B"},
    {"item_id": "s1", "reference": "The cat sat.", "better": "A cat sat.", "worse": "A dog.",
     "better_system": "C", "worse_system": "B"},
    {"item_id": 7, "reference": "He left.", "better": "He went away.", "worse": "She stayed.",
     "better_system": "A", "worse_system": "C"},
]


def test_pair_jsonl_loads_and_round_trips(tmp_path):
    ds = meta_eval.load(str(write_lines(tmp_path / "mine.jsonl", PAIRS)))
    assert isinstance(ds, meta_eval.PairSet) and ds.name == "mine" and len(ds) == 3 and ds.levels == ("pairs",)
    assert ds.frame["item_id"].tolist() == ["s1", "s1", "7"]
    assert ds.frame[["better_system", "worse_system"]].values.tolist() == [["A", "B"], ["C", "B"], ["A", "C"]]
    again = meta_eval.load(str(meta_eval.write_jsonl(ds, tmp_path / "again.jsonl")))
    assert again.frame.equals(ds.frame)
    # system names are optional
    bare = [{k: v for k, v in p.items() if not k.endswith("_system")} for p in PAIRS]
    ds = meta_eval.load(str(write_lines(tmp_path / "bare.jsonl", bare)))
    assert ds.frame["better"].tolist() == [p["better"] for p in PAIRS] and (ds.frame["better_system"] == "").all()


@pytest.mark.parametrize("lines, message", [
    ([PAIRS[0], {**PAIRS[1], "worse": ""}], "line 2: worse must be a non-empty string"),
    ([PAIRS[0], {k: v for k, v in PAIRS[1].items() if k != "reference"}], r"line 2: missing key\(s\) \['reference'\]"),
    ([PAIRS[0], {k: v for k, v in PAIRS[1].items() if k != "worse_system"}],
     "line 2: give both better_system and worse_system, or neither"),
    ([{k: v for k, v in PAIRS[0].items() if not k.endswith("_system")}, PAIRS[1]],
     "line 2: system names are given on some lines and not on others"),
    ([PAIRS[0], PAIRS[1], PAIRS[0]], r"line 3: the pair \(item_id='s1', better_system='A', worse_system='B'\) occurs "
                                     "twice"),
    ([{"item_id": "x", "text": "?"}], "line 1: neither a judged hypothesis"),
])
def test_pair_jsonl_errors_name_the_file_and_line(tmp_path, lines, message):
    with pytest.raises(DatasetError, match=rf"pairs.jsonl, {message}"):
        meta_eval.load(str(write_lines(tmp_path / "pairs.jsonl", lines)))


def test_jsonl_that_is_not_utf8_names_the_file_and_line(tmp_path):
    utf16 = tmp_path / "u16.jsonl"
    utf16.write_text(json.dumps(GOOD[0]) + "\n", encoding="utf-16")
    with pytest.raises(DatasetError, match="u16.jsonl, line 1: the file is UTF-16 text.*save it as UTF-8"):
        meta_eval.load(str(utf16))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes((json.dumps(GOOD[0]) + "\n").encode() + '{"item_id": "café"}\n'.encode("latin-1"))
    with pytest.raises(DatasetError, match=r"latin.jsonl, line 2: not UTF-8 text \(byte 0xe9 at column 17\)"):
        meta_eval.load_jsonl(latin)
    bom = write_lines(tmp_path / "bom.jsonl", GOOD)
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())  # a UTF-8 byte order mark is fine
    assert len(meta_eval.load(str(bom))) == 3


def test_sample_size_must_not_be_negative(tmp_path):
    ds = meta_eval.load(str(write_lines(tmp_path / "mine.jsonl", PAIRS)))
    with pytest.raises(DatasetError, match="sample size must be 0 \\(all\\) or a positive whole number, not -3"):
        ds.sample(-3)
    with pytest.raises(DatasetError, match="not -1"):
        meta_eval.load_jsonl(write_lines(tmp_path / "j.jsonl", GOOD)).sample(-1)


def _bartscore_pickle(pairs: meta_eval.PairSet, path):
    """``pairs`` packaged as BARTScore's WMT/<pair>/data.pkl: {key: {src, ref, better: {sys, sys_name, scores}, ...}}."""
    import pickle

    data = {int(r.item_id): {"src": "", "ref": r.reference,
                             "better": {"sys_name": r.better_system, "sys": r.better, "scores": {}},
                             "worse": {"sys_name": r.worse_system, "sys": r.worse, "scores": {}}}
            for r in pairs.frame.itertuples()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(data, protocol=4))
    return path


def _overlap():
    """Share of the reference's words found in the candidate (cheap, deterministic)."""
    from metricbias.metrics.base import Metric

    class Overlap(Metric):
        name = "toy_overlap"
        family = "ngram"

        def _score(self, candidates, references):
            return np.array([len(set(c.split()) & set(r.split())) / len(set(r.split()))
                             for c, r in zip(candidates, references)])

    return Overlap()


def test_registered_darr_set_gives_the_same_tau_as_jsonl_and_pickle(real_data, tmp_path):
    from metricbias.metaeval import analysis

    registered = meta_eval.load("wmt19-kk-en")
    as_jsonl = meta_eval.load(str(meta_eval.write_jsonl(registered, tmp_path / "kk-en.jsonl")))
    as_pickle = meta_eval.load(str(_bartscore_pickle(registered, tmp_path / "WMT" / "kk-en" / "data.pkl")))
    assert as_pickle.name == "kk-en" and as_jsonl.name == "kk-en"
    for ds in (as_jsonl, as_pickle):
        assert ds.frame.equals(registered.frame)
    taus = [analysis.correlations(ds, ("overlap", _overlap())).iloc[0] for ds in (registered, as_jsonl, as_pickle)]
    assert [t["level"] for t in taus] == ["pairs"] * 3 and taus[0]["n"] == 9728
    assert taus[0]["value"] == taus[1]["value"] == taus[2]["value"]
    assert -1 < taus[0]["value"] < 1


def test_cli_reads_a_darr_pickle_and_a_pair_jsonl(real_data, tmp_path, monkeypatch):
    import pandas as pd

    from metricbias import cli

    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    registered = meta_eval.load("wmt19-kk-en")
    paths = {"wmt19-kk-en": "wmt19-kk-en",
             "jsonl": str(meta_eval.write_jsonl(registered, tmp_path / "kk-en.jsonl")),
             "pickle": str(_bartscore_pickle(registered, tmp_path / "kk-en.pkl"))}
    values = {}
    for kind, dataset in paths.items():
        out = tmp_path / f"{kind}.csv"
        assert cli.main(["metaeval", "--dataset", dataset, "--metrics", "bleu", "--sample", "150", "--out", str(out)]) == 0
        row = pd.read_csv(out).iloc[0]
        assert (row["level"], row["n"]) == ("pairs", 150)
        values[kind] = row["value"]
    assert values["wmt19-kk-en"] == values["jsonl"] == values["pickle"]


def test_drawn_sets_note_names_what_each_draw_kept():
    from metricbias.datasets import meta_eval

    flickr = meta_eval.load_flickr8k()
    wmt = meta_eval.load("wmt19-kk-en")
    note = notes.drawn_sets_note({"Flickr8k images": (flickr.sample(10, seed=0), flickr, "sample_size"),
                                 "WMT19 kk-en DARR pairs": (wmt, wmt, "darr_pairs")})
    assert note.startswith("Drawn with the seed") and "10 of the 1,000 Flickr8k images (`sample_size`)" in note
    assert "DARR" not in note  # kept whole
    assert notes.drawn_sets_note({"WMT19 kk-en DARR pairs": (wmt, wmt, "darr_pairs")}) == ""
