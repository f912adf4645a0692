"""Preference and performance analyses and the `metricbias metaeval` command, on a toy metric."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metricbias import cli, metrics
from metricbias.book.reproduction import ch3_trained, ch7_summaries
from metricbias.cache import ScoreCache
from metricbias.datasets.meta_eval import JudgedSet, PairSet, load_jsonl
from metricbias.metaeval import analysis
from metricbias.metaeval.scoring import hypothesis_scores, pair_scores
from metricbias.metrics.base import Metric


class Overlap(Metric):
    """Jaccard overlap of lower-cased word sets, plus a small bonus for the word 'man' (a deliberately biased toy)."""

    name = "toy_overlap"
    family = "ngram"
    defaults = {"bonus": 0.0}

    def _score(self, candidates, references):
        out = []
        for c, r in zip(candidates, references):
            a, b = set(c.lower().rstrip(".").split()), set(r.lower().rstrip(".").split())
            out.append(len(a & b) / len(a | b) + self.options["bonus"] * ("man" in a))
        return np.array(out)


def judged(rows, levels=("example",)):
    frame = pd.DataFrame(rows)
    frame["references"] = frame["references"].map(tuple)
    return JudgedSet("toy", frame, levels=levels)


CAPTIONS = judged([
    {"item_id": 1, "system_id": "a", "hypothesis": "a man rides a horse", "references": ["a person on a horse", "a rider"], "human:overall": 4},
    {"item_id": 1, "system_id": "b", "hypothesis": "a man sits", "references": ["a person on a horse", "a rider"], "human:overall": 2},
    {"item_id": 2, "system_id": "c", "hypothesis": "a woman and a dog", "references": ["a dog runs", "a dog"], "human:overall": 3},
    {"item_id": 3, "system_id": "d", "hypothesis": "a dog", "references": ["a man and his dog", "a dog"], "human:overall": 1},
    {"item_id": 4, "system_id": "e", "hypothesis": "his dog runs", "references": ["a man and a dog"], "human:overall": 2},
])


def test_scores_per_reference_and_aggregation():
    s = hypothesis_scores(Overlap(), CAPTIONS)
    # "a man rides a horse" vs "a person on a horse" = {a, horse}/{a,man,rides,horse,person,on} = 2/6; vs "a rider" 1/5
    assert s["max"][0] == pytest.approx(2 / 6)
    assert s["mean"][0] == pytest.approx((2 / 6 + 1 / 5) / 2)
    assert s["mean"][4] == s["max"][4] == pytest.approx(1 / 6)  # one reference: {dog} / {his, dog, runs, a, man, and}


def test_metrics_can_be_labelled():
    table = analysis.run(CAPTIONS, [("Overlap+", Overlap(bonus=0.1)), Overlap()])
    assert set(table["metric"]) == {"Overlap+", "toy_overlap"} and set(table["name"]) == {"toy_overlap"}


def test_selection():
    sel = analysis.selection(CAPTIONS)
    assert sel["hypothesis_gender"].tolist() == ["male", "male", "female", "none", "male"]
    assert sel["references_neutral"].tolist() == [True, True, True, False, False]
    assert sel["preference"].tolist() == [True, True, False, False, False]
    assert sel["single_gender"].tolist() == [True, True, False, False, True]


def test_preference_table():
    unbiased = analysis.preference(CAPTIONS, [Overlap()])
    assert set(unbiased["aggregation"]) == {"max", "mean"}
    row = unbiased.set_index("aggregation").loc["max"]
    # references are neutral and the toy metric is symmetric in man/woman: every pair ties
    assert row["n"] == 2 and row["share_equal"] == 1.0 and row["mean_male"] == pytest.approx(row["mean_female"])
    biased = analysis.preference(CAPTIONS, [Overlap(bonus=0.1)]).set_index("aggregation").loc["max"]
    assert biased["share_male_higher"] == 1.0 and biased["share_equal"] == 0.0
    assert biased["mean_male"] - biased["mean_female"] == pytest.approx(0.1)


def test_preference_pairs_keep_each_pair_and_its_image():
    pairs = analysis.preference_pairs(CAPTIONS, [Overlap(bonus=0.1)])
    # the two preference pairs (image 1), each in both aggregations; the bonus is the whole male - female difference
    assert len(pairs) == 4 and pairs["item_id"].tolist() == [1, 1, 1, 1]
    assert pairs["difference"].tolist() == pytest.approx([0.1] * 4)
    max_rows = pairs[pairs["aggregation"] == "max"]
    assert max_rows["male"].iloc[0] == pytest.approx(2 / 6 + 0.1)  # "a man rides a horse" vs "a person on a horse"
    table = analysis.preference(CAPTIONS, [Overlap(bonus=0.1)]).set_index("aggregation")
    assert table.loc["max", "mean_male"] == pytest.approx(max_rows["male"].mean())
    lower = Overlap(bonus=0.1)
    lower.direction = "lower"  # a distance: a higher male score is a preference for the female hypothesis
    assert analysis.preference_pairs(CAPTIONS, [lower])["difference"].tolist() == pytest.approx([-0.1] * 4)


def test_performance_before_and_after_swap():
    perf = analysis.performance(CAPTIONS, [Overlap(bonus=0.5)])
    assert set(perf["subset"]) == {"all", "single_gender"}
    assert set(perf["statistic"]) == {"spearman", "kendall"}
    row = perf[(perf["aggregation"] == "max") & (perf["subset"] == "all") & (perf["statistic"] == "spearman")].iloc[0]
    s = hypothesis_scores(Overlap(bonus=0.5), CAPTIONS)["max"]
    s_swap = hypothesis_scores(Overlap(bonus=0.5), CAPTIONS.swapped())["max"]
    human = CAPTIONS.human("overall")
    assert row["origin"] == pytest.approx(stats.spearmanr(s, human).statistic)
    assert row["swap"] == pytest.approx(stats.spearmanr(s_swap, human).statistic)
    assert row["delta"] == pytest.approx(row["swap"] - row["origin"])
    assert row["n_origin"] == 5


def test_system_level_and_top_k():
    rows = []
    for item in range(4):
        for k, system in enumerate("abcd"):
            rows.append({"item_id": item, "system_id": system, "hypothesis": " ".join(["a", "man", *(f"w{j}" for j in range(k)), "dog"]),
                         "references": ["a man and his dog"], "human:coverage": float(k + item)})
    ds = judged(rows, levels=("system",))
    table = analysis.run(ds, [Overlap()])
    assert table["level"].tolist() == ["system"] and table["aggregation"].tolist() == ["single"]
    assert table["value"].item() == pytest.approx(-1.0)  # more filler words: lower overlap, higher human score
    curve = analysis.top_k(ds, [Overlap()])
    assert curve["k"].tolist() == [3, 4, 3, 4] and curve["condition"].tolist() == ["origin", "origin", "swap", "swap"]


def test_pairs_darr():
    frame = pd.DataFrame({"item_id": ["1", "2", "3"], "reference": ["a cat sat", "a dog ran", "he went home"],
                          "better": ["a cat sat", "a dog", "he went"], "worse": ["a dog sat", "a cat", "he went home"],
                          "better_system": list("xyz"), "worse_system": list("uvw")})
    ds = PairSet("toy-pairs", frame)
    b, w = pair_scores(Overlap(), ds)
    assert b.tolist() == pytest.approx([1.0, 2 / 3, 2 / 3]) and w.tolist() == pytest.approx([0.5, 1 / 4, 1.0])
    table = analysis.run(ds, [Overlap()], swap="gender")
    assert table["statistic"].item() == "darr_tau" and table["value"].item() == pytest.approx(1 / 3)
    assert table["swap"].item() == "gender"

    class Distance(Overlap):  # lower is better: the same ranking must give the same tau
        name = "toy_distance"
        direction = "lower"

        def _score(self, candidates, references):
            return 1.0 - super()._score(candidates, references)

    assert analysis.run(ds, [Distance()])["value"].item() == pytest.approx(1 / 3)


def test_scores_go_through_the_cache(tmp_path):
    cache = ScoreCache(tmp_path / "scores.sqlite")
    first = hypothesis_scores(Overlap(), CAPTIONS, cache)
    assert (cache.misses, cache.hits) == (9, 0)  # 9 (hypothesis, reference) pairs
    again = hypothesis_scores(Overlap(), CAPTIONS, cache)
    assert (cache.misses, cache.hits) == (9, 9)
    assert np.array_equal(first["max"], again["max"])


def test_cli_metaeval_on_jsonl(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    lines = []
    for item in range(4):
        for k, system in enumerate("abc"):
            lines.append({"item_id": f"doc{item}", "system_id": system, "hypothesis": f"a man {'x ' * k}rides",
                          "references": ["a man rides", "he rides a horse"], "human": {"overall": 3 - k + 0.1 * item}})
    path = tmp_path / "judged.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    monkeypatch.setattr("metricbias.metrics.registry._REGISTERED", {})  # forgotten after the test
    metrics.register(Overlap)
    out = tmp_path / "out.csv"
    assert cli.main(["metaeval", "--dataset", str(path), "--metrics", "toy_overlap", "--swap", "gender",
                     "--out", str(out)]) == 0
    table = pd.read_csv(out)
    # the download flags p-values written as a bound (analysis.for_download) beside the p_value column
    columns = list(analysis.COLUMNS)
    columns.insert(columns.index("p_value") + 1, "p_value_is_upper_bound")
    assert list(table.columns) == columns
    assert set(table["level"]) == {"example", "system"} and set(table["aggregation"]) == {"max", "mean"}
    assert set(table["subset"]) == {"all", "single_gender"} and (table["swap"] == "gender").all()
    assert f"to {out}" in capsys.readouterr().out
    expected = analysis.run(load_jsonl(path), [Overlap()], swap="gender")
    assert np.allclose(table["value"], expected["value"])
    # errors: unknown metric, malformed dataset line; nothing is written
    bad = tmp_path / "bad.csv"
    assert cli.main(["metaeval", "--dataset", str(path), "--metrics", "nope", "--out", str(bad)]) == 2
    path.write_text(path.read_text() + "{oops\n")
    assert cli.main(["metaeval", "--dataset", str(path), "--metrics", "toy_overlap", "--out", str(bad)]) == 2
    assert "judged.jsonl, line 13: not valid JSON" in capsys.readouterr().err
    assert not bad.exists()


SIZES = {"darr_pairs": 100, "stsb_pairs": 40}


def _provenance(folder, info):
    import json

    folder.mkdir(parents=True)
    (folder / "provenance.json").write_text(json.dumps(info))
    return folder


def test_recorded_figures_count_only_on_the_whole_sets(tmp_path, monkeypatch):
    from metricbias import backbones

    rows = [{"metric": "bartscore F", "dataset": "wmt19-kk-en", "statistic": "darr_tau", "value": 0.3, "n": 100},
            {"metric": "bleu", "dataset": "wmt19-kk-en", "statistic": "darr_tau", "value": 0.25, "n": 100},
            {"dataset": "stsb-dev", "statistic": "pearson", "value": 0.9, "n": 20}]  # a draw of 20 of 40: not counted
    folders = {"para-a": _provenance(tmp_path / "para-a", {"quality": {"rows": rows}}),
               "mlm-a": _provenance(tmp_path / "mlm-a", {"figures": {"masked_token_accuracy": 0.2,
                                                                     "most_frequent_token_accuracy": 0.05}}),
               "stsb-a": _provenance(tmp_path / "stsb-a", {"figures": {"stsb_dev_pearson": 0.8}, "dev_rows": 40}),
               "debiased-a": _provenance(tmp_path / "debiased-a", {"figures": {"evaluation": [
                   {"kind": "quality", "dataset": "stsb-dev", "statistic": "pearson", "n": 40, "before": 0.8,
                    "after": 0.7},
                   {"kind": "bias", "dataset": "published", "statistic": "bias (Eq. 2)", "n": 40, "after": 1.0}]}})}
    monkeypatch.setattr(backbones, "trained_path", lambda name: folders.get(name))
    monkeypatch.setattr("metricbias.trained.recipes.RECIPES", {"para-a": ("paraphraser", {}), "mlm-a": ("mlm_head", {}),
                                                               "stsb-a": ("regression", {}), "debiased-a": ("adapter", {}),
                                                               "para-gone": ("paraphraser", {})})
    parts = ch3_trained.recorded(sizes=SIZES)
    assert list(parts) == ["para-a", "mlm-a", "stsb-a", "debiased-a"]  # a part not found is left out
    assert parts["para-a"]["figures"] == {("wmt19-kk-en", "darr_tau"): 0.3}
    assert parts["para-a"]["bleu"] == {("wmt19-kk-en", "darr_tau"): 0.25}
    assert parts["mlm-a"]["figures"] == {"accuracy": 0.2} and parts["mlm-a"]["reference"] == 0.05
    assert parts["stsb-a"]["figures"] == {("stsb-dev", "pearson"): 0.8}
    assert parts["debiased-a"]["figures"] == {("stsb-dev", "pearson"): 0.7}  # the adapted metric: "after"


def test_one_quality_figure_per_trained_part_beside_its_floor():
    from metricbias.metrics import Spec

    entries = [Spec("BLEU", "bleu", {}), Spec("BARTScore-A-F", "bartscore", {"backbone": "para-a", "variant": "F"}),
               Spec("BARTScore-B-F", "bartscore", {"backbone": "para-b", "variant": "F"})]
    parts = {"para-a": {"trainer": "paraphraser", "figures": {("wmt19-kk-en", "darr_tau"): 0.3}, "reference": np.nan,
                        "bleu": {}},
             "para-b": {"trainer": "paraphraser", "figures": {}, "reference": np.nan, "bleu": {}},
             "mlm-a": {"trainer": "mlm_head", "figures": {"accuracy": 0.2}, "reference": 0.05, "bleu": {},
                       "positions": 100},
             "stsb-a": {"trainer": "regression", "figures": {("stsb-dev", "pearson"): 0.8}, "reference": np.nan,
                        "bleu": {}}}
    measured = pd.DataFrame({"metric": ["BLEU", "BARTScore-A-F", "BARTScore-B-F"], "darr_tau": [0.25, 0.1, 0.05],
                             "darr_pairs": [100, 100, 100], "stsb_r": [0.35, 0.2, 0.6],
                             "stsb_pairs": [40, 40, 40]})
    quality = ch3_trained.with_recorded(measured, entries, parts)
    # the recorded whole-set figure replaces the measured one; what is not recorded stays as measured
    assert quality["darr_tau"].tolist() == [0.25, 0.3, 0.05] and quality["stsb_r"].tolist() == [0.35, 0.2, 0.6]
    # the floor word is the paired comparison's (planted here): para-a's τ is above BLEU's, its r below; para-b's
    # r is not distinguishable from BLEU's, its τ below; stsb-a's r above
    floors = pd.DataFrame({"part": ["para-a", "para-a", "para-b", "para-b", "stsb-a"],
                           "measure": ["WMT19 kk-en DARR τ", "STS-B dev r"] * 2 + ["STS-B dev r"],
                           "floor": ["above", "below", "below", "not distinguishable", "above"]})
    table = ch3_trained.parts_quality(parts, quality, entries, sizes=SIZES, head_floor=0.3, floors=floors)
    assert table.columns.tolist() == ch3_trained.COLUMNS and len(table.columns) <= 8
    rows = {(r["part"], r["measure"]): r for r in table.to_dict("records")}
    a = rows["para-a", "WMT19 kk-en DARR τ"]
    assert (a["value"], a["reference"], a["floor"], a["above floor"]) == (0.3, "BLEU", 0.25, "above")
    assert rows["para-a", "STS-B dev r"]["value"] == 0.2  # from the chapter's whole-set measurement
    assert rows["para-b", "STS-B dev r"]["above floor"] == "not distinguishable" and rows[
        "para-b", "WMT19 kk-en DARR τ"]["above floor"] == "below"
    head = rows["mlm-a", "masked-token accuracy"]
    assert (head["reference"], head["reference value"], head["floor"], head["above floor"]) == (
        "most frequent token", 0.05, 0.3, "below")
    # a head's floor word is the exact binomial test: 20 of 100 right, Clopper–Pearson 95% CI 0.127 to 0.292, below
    # 0.30; 25 of 100 (0.169 to 0.347) is not distinguishable from it, and enters
    near = ch3_trained.parts_quality({"mlm-b": {**parts["mlm-a"], "figures": {"accuracy": 0.25}}}, quality, entries,
                                     sizes=SIZES, head_floor=0.3)
    assert near["above floor"].tolist() == ["not distinguishable"] and ch3_trained.below_floor(near) == []
    assert [k for k in rows if k[0] == "stsb-a"] == [("stsb-a", "STS-B dev r")]  # its STS-B r only
    assert table["kind"].tolist()[:4] == ["paraphraser (BARTScore-F)"] * 4  # paraphrasers first
    # para-a: τ above BLEU's, r (0.2) below BLEU's 0.35; below its floor on one measure is below its floor
    assert ch3_trained.below_floor(table) == ["para-a", "para-b", "mlm-a"]
    found = ch3_trained.quality_findings(table)
    assert (found["parts"], found["below"], found["below_names"]) == (4, 3, "para-a, para-b, mlm-a")
    assert found["para_a_darr_tau"] == 0.3 and found["para_a_darr_tau_reference"] == 0.25
    page = ch3_trained.page_table(table).set_index("part")  # one row per part, the references first (heads last)
    assert page.index.tolist() == [ch3_trained.REFERENCE_ROWS["BLEU"], "para-a", "para-b", "stsb-a",
                                   ch3_trained.REFERENCE_ROWS["most frequent token"], "mlm-a"]
    assert page.loc[ch3_trained.REFERENCE_ROWS["BLEU"], ["DARR τ", "STS-B r"]].tolist() == [0.25, 0.35]
    assert page.loc["para-a", "above floor"] == "below" and page.loc["stsb-a", "above floor"] == "above"
    assert page.loc["para-b", "above floor"] == "below"  # below on one measure is below
    assert np.isnan(page.loc["stsb-a", "DARR τ"]) and page.loc["mlm-a", "masked-token accuracy"] == 0.2
    # a draw is not the whole set: the chapter's figure does not stand in, and BLEU's is taken as recorded
    drawn = measured.assign(darr_pairs=12)
    parts["para-b"]["bleu"] = {("wmt19-kk-en", "darr_tau"): 0.26}
    table = ch3_trained.parts_quality(parts, drawn, entries, sizes=SIZES, floors=floors)
    b = table[(table["part"] == "para-b") & (table["measure"] == "WMT19 kk-en DARR τ")].iloc[0]
    assert np.isnan(b["value"]) and b["reference value"] == 0.26 and b["above floor"] == "not measured"


def test_same_tau_on_the_pairs_read_back_and_on_a_reordered_copy(tmp_path):
    from metricbias.datasets.meta_eval import load, write_jsonl

    frame = pd.DataFrame({"item_id": ["1", "2", "3"], "reference": ["a cat sat", "a dog ran", "he went home"],
                          "better": ["a cat sat", "a dog", "he went"], "worse": ["a dog sat", "a cat", "he went home"]})
    ds = PairSet("toy-pairs", frame)
    back = load(str(write_jsonl(ds, tmp_path / "pairs.jsonl")))
    flipped = PairSet("flipped", frame.rename(columns={"better": "worse", "worse": "better"}))
    t = ch7_summaries.same_tau({"registered": ds, "pair JSONL": back, "flipped": flipped}, [Overlap()])
    assert t.columns.tolist() == ["metric", "registered", "pair JSONL", "flipped", "largest difference"]
    row = t.iloc[0]
    assert row["registered"] == row["pair JSONL"] == pytest.approx(1 / 3)  # as test_pairs_darr
    assert row["flipped"] == pytest.approx(-1 / 3) and row["largest difference"] == pytest.approx(2 / 3)


def test_trained_parts_read_as_words():
    from metricbias.book.reproduction.names import part_name

    assert part_name("para-all-MiniLM-L6-v2") == "MiniLM paraphraser"
    assert part_name("stsb-all-mpnet-base-v2") == "MPNet regression head"
    assert part_name("mlm-all-MiniLM-L6-v2") == "MiniLM masked-LM head"
    assert part_name("debiased-bertscore-all-MiniLM-L6-v2") == "BERTScore-MiniLM, debiased"
    assert part_name("debiased-regression-stsb-all-MiniLM-L6-v2-table7") == "Regression-MiniLM, debiased (Table 7 recipe)"
    assert part_name("para-a") == "para-a"  # a name it does not know stays as it is
