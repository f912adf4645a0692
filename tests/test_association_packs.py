"""Association packs: r(t, A, B) of every target of whole tests, one file per configuration, built, verified on a
seeded sample of targets, imported, and read back into ``association.run`` with the rows scoring gives."""

import json

import numpy as np
import pandas as pd
import pytest

from metricbias import metrics
from metricbias.bias import association
from metricbias.book import association_packs, pack_plan, packs
from metricbias.cache import ScoreCache
from metricbias.datasets import seat

SET = "associations:tests=C6-N,DB:C,C3-N;levels=word"
SAME = ["test", "level", "metric", "effect_size", "p_value", "n_targets", "n_attributes", "n_dropped", "statistic",
        "n_partitions", "exact", "dropped"]


@pytest.fixture
def built(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    entries = [packs.Entry(packs.MetricConfig(name, {}), SET) for name in ("chrf", "embedding_average", "cider")]
    out = tmp_path / "packs"
    with pytest.warns(association.DroppedWordsWarning):
        written = packs.build(entries, out, log=lambda *_: None, progress=False)
    return out, written


def test_a_pack_holds_r_of_each_kept_target_and_what_the_statistics_need(built):
    out, written = built
    assert [p.name for p in written] == ["associations-tests-C6-N-DB-C-C3-N-levels-word__chrF.npz",
                                         "associations-tests-C6-N-DB-C-C3-N-levels-word__Embedding-average.npz",
                                         "associations-tests-C6-N-DB-C-C3-N-levels-word__CIDEr-D.npz"]
    meta, r, offsets = packs.read(written[1])
    tests = seat.tests("C6-N,DB:C,C3-N", "word")
    assert meta["kind"] == "associations" and [t["test"] for t in meta["tests"]] == ["C6-N", "DB:C", "C3-N"]
    c3 = meta["tests"][2]
    assert c3["dropped"]["X"] and c3["sizes"][0] == 32 - len(c3["dropped"]["X"])  # names without a vector
    # C6-N and DB:C keep one female name with a vector: not run, no r; C3-N's r, the first by hand from S
    assert [t["runs"] for t in meta["tests"]] == [False, False, True] and list(offsets) == [0, 0, 0, len(r)]
    assert len(r) == meta["scores"] == c3["sizes"][0] + c3["sizes"][1] == 13 and meta["tests"][0]["scale"] is None
    avg = metrics.get("embedding_average")
    test = association.drop_unrepresented(tests[2], avg)[0]  # less the names without a vector
    s = association.symmetric_similarity(*avg.score_cross(test.targets, test.attributes))
    assert r[0] == pytest.approx(s[0, :len(test.a)].mean() - s[0, len(test.a):].mean(), abs=1e-12)
    assert c3["scale"] == pytest.approx(np.abs(s).max(), abs=0)
    # a second build keeps them
    assert packs.build([packs.Entry(packs.MetricConfig("chrf", {}), SET)], out, log=lambda *_: None) == []


def test_verify_recomputes_a_sample_of_targets_and_catches_an_edit(built):
    out, written = built
    found = packs.verify(out)
    assert [c.status for c in found] == ["verified"] * 3
    assert all(c.checked == min(c.scores, 32) for c in found) and max(c.max_diff for c in found) < 1e-12
    # an edited r (provenance updated, so that the sha256 holds): the live sample disagrees
    meta, r, offsets = packs.read(written[0])
    r = r.copy()
    r[:] += 0.01
    recorded = json.loads(written[0].with_suffix(".json").read_text())
    packs.write(written[0], meta, r, offsets, {k: v for k, v in recorded.items() if k not in ("sha256", "meta")})
    with pytest.raises(packs.PackError, match="chrF, C6-N \\(word\\)|chrF, DB:C \\(word\\) target .* pack r .* live"):
        packs.verify(out, fraction=1.0)


def test_imported_packs_give_the_rows_of_live_scoring(built):
    out, _ = built
    cache = ScoreCache(out.parent / "fresh.sqlite")
    done = packs.import_packs(out, cache, progress=False)
    assert {c.status for c in done} == {"imported"} and len(cache.packs()) == 3
    tests = seat.tests("C6-N,DB:C,C3-N", "word")
    suite = {"chrF": metrics.get("chrf"), "Embedding average": metrics.get("embedding_average"),
             "CIDEr-D": metrics.get("cider"), "BLEU": metrics.get("bleu")}
    records = association_packs.load(tests, suite, out, cache)
    assert sorted(records) == ["CIDEr-D", "Embedding average", "chrF"]  # no BLEU pack
    assert association_packs.load(seat.tests("C6-N", "sent", sample_size=8), suite, out, cache) == {}
    with pytest.warns(association.DroppedWordsWarning):
        live = association.run(tests, suite, cache=None, n_permutations=500)
        packed = association.run(tests, suite, cache=None, n_permutations=500, associations=records)
    pd.testing.assert_frame_equal(live[SAME], packed[SAME])
    assert (packed.loc[packed["metric"] != "BLEU", "scoring_seconds"] == 0).all()


def test_every_configuration_of_chapter_5_has_an_association_pack_in_the_plan():
    entries = [e for e in pack_plan.plan("offline") if e.text_set.startswith("associations:")]
    labels = {e.config.label for e in entries}
    assert {"BLEU", "chrF", "CIDEr-D", "WMD", "BERTScore-MiniLM", "MoverScore-MiniLM", "Regression-MiniLM"} <= labels
    assert not any(lab.startswith(("BARTScore", "PRISM")) for lab in labels)
    assert {e.text_set for e in entries} == {"associations:tests=all;levels=all"}


def test_a_stopped_build_resumes_after_its_last_finished_test(tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    entry = packs.Entry(packs.MetricConfig("rouge1", {}), "associations:tests=C6-N,DB:L;levels=word")
    calls = []
    real = association.associations

    def stop_at_second(tests, metric, **kw):
        calls.append(tests[0].name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(tests, metric, **kw)

    monkeypatch.setattr(association, "associations", stop_at_second)
    with pytest.raises(KeyboardInterrupt):
        packs.build([entry], tmp_path / "packs", log=lambda *_: None, progress=False)
    monkeypatch.setattr(association, "associations", lambda tests, metric, **kw: calls.append(tests[0].name)
                        or real(tests, metric, **kw))
    (path,) = packs.build([entry], tmp_path / "packs", log=lambda *_: None, progress=False)
    assert calls == ["C6-N", "DB:L", "DB:L"]  # C6-N was kept, DB:L computed again
    meta, r, _ = packs.read(path)
    fresh = packs.build([entry], tmp_path / "again", log=lambda *_: None, progress=False)[0]
    assert np.array_equal(packs.read(fresh)[1], r) and packs.read(fresh)[0]["tests"] == meta["tests"]
    assert not list((tmp_path / "cache" / "association-packs").iterdir())  # the finished file's parts are gone
