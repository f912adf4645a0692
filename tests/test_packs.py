"""Score packs: build -> import -> the same bias tables as live; every check catches what it is for."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metricbias import jobs, packs
from metricbias.bias.pairwise import bias_table
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
    numbers = packs.chapter_numbers(log, cache)
    assert numbers["from_packs"] == 104 and numbers["computed"] == 104 and numbers["checked"] == 32
    assert numbers["max_diff"] == 0.0
    assert packs.chapter_sentence(numbers).startswith("Of this chapter's 208 scores, 104 came from verified score")
    monkeypatch.setenv(packs.RECOMPUTE_ENV, "1")
    packs.prepare(out, cache, log=lambda *_: None)
    assert cache.packs() == []
    with jobs.collect() as ran:
        score_pairs(datasets.load(DATASET), LengthRatio.name, cache=cache)
    assert sum(j.computed for j in ran) == 104
