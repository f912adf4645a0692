"""Scoring jobs in process: the driver's cache use, chunks, retries, and sweeps (manifest, resume, failures)."""

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from job_helpers import PAIRS, CorpusSize, Flaky, Overlap, registered

from metricbias import cli, jobs, metrics, profiles, scoring, sweep
from metricbias.cache import ScoreCache
from metricbias.metrics import MetricError, Spec

CANDS = ["a b", "a c", "b c", "a b", "c d", "a b c"]
REFS = ["a b c", "a b c", "b", "a b c", "d", "c"]
EXPECTED = [2.0, 2.0, 1.0, 2.0, 1.0, 1.0]



@pytest.fixture(autouse=True)
def toys():
    with registered():
        yield


def test_chunks_go_through_the_cache_and_only_the_missing_pairs_are_computed(tmp_path):
    cache = ScoreCache(tmp_path / "scores.sqlite")
    Overlap.calls.clear()
    job, = jobs.run([jobs.Job(Overlap(), CANDS, REFS)], cache, chunk_size=4)
    assert job.scores.tolist() == EXPECTED and job.status == "done"
    assert Overlap.calls == [3, 2]  # chunks of 4 pairs, each scored on its distinct pairs ("a b" twice)
    assert (job.cached, job.computed, job.attempts) == (0, 6, 1) and cache.misses == 6
    more = jobs.Job(Overlap(), CANDS + ["x"], REFS + ["x y"])
    jobs.run([more], cache, chunk_size=4)
    assert Overlap.calls == [3, 2, 1] and more.scores.tolist() == EXPECTED + [1.0]
    assert (more.status, more.cached, more.computed) == ("done", 6, 1)
    again, = jobs.run([jobs.Job(Overlap(), CANDS, REFS)], cache)
    assert again.status == "cached" and Overlap.calls == [3, 2, 1]
    # the same scores as the metric's own call, and what the cache holds is what it returns
    assert np.array_equal(Overlap().score(CANDS, REFS, cache=cache), job.scores)


def test_a_corpus_dependent_job_is_scored_whole():
    job, = jobs.run([jobs.Job(CorpusSize(), CANDS, REFS)], None, chunk_size=2)
    assert job.scores.tolist() == [s + 6 for s in EXPECTED]  # the corpus is all six pairs, not chunks of two
    assert job.id == jobs.Job(CorpusSize(), CANDS, REFS).id != jobs.Job(CorpusSize(), CANDS[:5], REFS[:5]).id


def test_transient_failures_are_retried_and_bad_input_is_not():
    Flaky.seen = 0
    job, = jobs.run([jobs.Job(Flaky(failures=2), CANDS, REFS)], None)
    assert job.scores.tolist() == EXPECTED and job.attempts == 3
    Flaky.seen = 0
    with pytest.raises(RuntimeError, match="transient fault"):
        jobs.run([jobs.Job(Flaky(failures=3), CANDS, REFS)], None)  # 1 try + 2 retries
    bad = jobs.Job(Overlap(), ["a", ""], ["a", "b"])
    with pytest.raises(MetricError, match="candidate 1 is empty"):
        jobs.run([bad], None)
    good = jobs.Job(Overlap(), CANDS, REFS)
    jobs.run([bad, good], None, raise_errors=False)
    assert (bad.status, bad.scores, good.status) == ("failed", None, "done")
    assert "candidate 1 is empty" in bad.error and bad.record()["status"] == "failed"


def test_unknown_schedulers_are_refused_in_one_line(monkeypatch):
    with pytest.raises(ValueError, match="unknown scheduler 'spark'.*inprocess, local or tcp://HOST:PORT"):
        jobs.executor("spark")
    monkeypatch.setenv(jobs.SCHEDULER_ENV, "spark")
    with pytest.raises(ValueError, match="METRICBIAS_SCHEDULER='spark'"):
        scoring.score_pairs(PAIRS, Overlap(), cache=None)
    monkeypatch.setenv(jobs.SCHEDULER_ENV, "inprocess")
    assert isinstance(jobs.current(), jobs.InProcess)
    with pytest.raises(ValueError, match="--workers must be at least 1"):
        jobs.executor("local", 0)


def test_inprocess_imports_nothing_of_dask(tmp_path):
    code = ("import sys; import metricbias as mb; from metricbias import scoring, sweep, cli; "
            "from metricbias.datasets import schema; "
            "t = scoring.score_pairs(schema.conform(__import__('pandas').DataFrame({'attribute': ['a'], "
            "'pair_id': ['0'], 'candidate_1': ['a b'], 'candidate_2': ['a'], 'reference_1': ['a b'], "
            "'reference_2': ['a b']})), 'bleu', cache=None); "
            "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')], 'dask imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_sweep_writes_bias_tables_and_a_manifest_and_resumes_from_the_cache(tmp_path, tmp_project):
    out = tmp_path / "sweep"
    first = sweep.sweep("smoke", out, metrics=["toy_job_overlap"], datasets=["toy-sweep"], n_resamples=99,
                        progress=False)
    assert first[["metric", "what", "pairs", "status", "computed", "attempts"]].values.tolist() == [
        ["toy_job_overlap", "toy-sweep", 10, "done", 10, 1]]
    table = pd.read_csv(out / "bias_toy-sweep.csv")
    assert table["metric"].unique().tolist() == ["toy_job_overlap"] and set(table["attribute"]) == {"a", "b"}
    manifest = pd.read_csv(out / "manifest.csv")
    assert list(manifest.columns) == sweep.MANIFEST_COLUMNS and manifest["job"].tolist() == first["job"].tolist()
    # again with a corpus-dependent metric: the overlap job is skipped (cached), the other runs per attribute
    second = sweep.sweep("smoke", out, metrics=["toy_job_overlap", "toy_job_corpus"], datasets=["toy-sweep"],
                         n_resamples=99, progress=False)
    assert second[["metric", "what", "status", "cached", "computed"]].values.tolist() == [
        ["toy_job_overlap", "toy-sweep", "cached", 10, 0],
        ["toy_job_corpus", "toy-sweep/a", "done", 0, 6], ["toy_job_corpus", "toy-sweep/b", "done", 0, 4]]
    both = pd.read_csv(out / "bias_toy-sweep.csv")
    pd.testing.assert_frame_equal(both[both["metric"] == "toy_job_overlap"].reset_index(drop=True), table)
    assert set(both["metric"]) == {"toy_job_overlap", "toy_job_corpus"}


def test_sweep_table_is_the_bias_commands_and_failures_are_reported(tmp_path, tmp_project, capsys):
    bias_out = tmp_path / "bias.csv"
    assert cli.main(["bias", "--dataset", "toy-sweep", "--scores", "live", "--metrics", "toy_job_overlap",
                     "--n-resamples", "99", "--out", str(bias_out)]) == 0
    Flaky.seen = 0
    code = cli.main(["sweep", "--profile", "smoke", "--metrics", "toy_job_overlap,toy_job_flaky:failures=5",
                     "--datasets", "toy-sweep", "--n-resamples", "99", "--retries", "1",
                     "--out", str(tmp_path / "sweep")])
    printed = capsys.readouterr().out
    assert code == 1  # a job failed for good
    assert "1 cached, 1 failed job(s)" in printed and "toy_job_flaky:failures=5 on toy-sweep after 2 tries" in printed
    assert (tmp_path / "sweep" / "bias_toy-sweep.csv").read_bytes() == bias_out.read_bytes()  # the others stand
    row = pd.read_csv(tmp_path / "sweep" / "manifest.csv").iloc[1]
    assert (row["status"], row["attempts"]) == ("failed", 2) and "transient fault" in row["error"]


def test_sweep_configurations():
    suite = sweep.configurations("smoke")
    assert suite == profiles.suite("smoke")
    assert all(isinstance(s, Spec) for s in suite) and any("backbone" in s.options for s in suite)
    static = sweep.configurations("smoke", backbones=["word2vec-googlenews-bolukbasi"])
    assert {s.name for s in static} == {*profiles.NGRAM, *profiles.EMBEDDING}  # no encoder-based configuration
    named = sweep.configurations("smoke", ["bleu", "bertscore"], ["all-MiniLM-L6-v2"])
    assert [s.label for s in named] == ["bleu", "bertscore@all-MiniLM-L6-v2"]
    with pytest.raises(ValueError, match="unknown profile 'huge'"):
        sweep.configurations("huge")
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        sweep.sweep("smoke", "unused", metrics=["bleu"], datasets=["nope"])


def test_a_worker_builds_each_configuration_once_and_checks_its_signature():
    blueprint = jobs.MetricBlueprint.of(Overlap())
    # models load once per process
    assert blueprint.build() is blueprint.build() is jobs.MetricBlueprint.of(Overlap()).build()
    texts, cand_idx, ref_idx = jobs._packed(CANDS, REFS)
    scores, seconds, where = jobs.compute(blueprint, texts, cand_idx, ref_idx)
    assert scores.tolist() == EXPECTED and seconds >= 0 and where.endswith(f":{os.getpid()}")
    other = jobs.MetricBlueprint(Overlap, {}, Overlap().signature.replace("metricbias-", "metricbias-0"))
    with pytest.raises(MetricError, match="install the same versions"):
        other.build()


def test_the_job_log_sums_each_metric_and_set_for_the_chapters_profile(tmp_path, monkeypatch):
    from metricbias.book import runner

    log = tmp_path / "jobs.jsonl"
    monkeypatch.setenv(jobs.LOG_ENV, str(log))
    metric = metrics.get("bleu")
    jobs.score(metric, ["a b c d", "a b"], ["a b c d", "a c"], what="toy")
    jobs.score(metric, ["x y z"], ["x z y"], what="toy")
    rows = runner.job_profile(log)
    assert len(rows) == 1 and rows[0]["metric"] == metric.config_label() and rows[0]["what"] == "toy"
    assert rows[0]["pairs"] == rows[0]["computed"] == 3 and rows[0]["seconds"] >= 0
    log.write_text(log.read_text() + '{"metric": "BLEU", "wha')  # a kernel stopped mid-line
    assert runner.job_profile(log) == rows
    assert runner.job_profile(tmp_path / "none.jsonl") == []
