"""Sweeps on a 2-worker Dask LocalCluster (processes): the same tables as in process, retries after a worker
dies mid-job, and only the driver writes the score cache."""

import os

import pandas as pd
import pytest
from job_helpers import Overlap, RecordCacheUse, registered

from metricbias import cli, jobs, sweep
from metricbias.cache import ScoreCache
from metricbias.datasets import registry
from metricbias.metrics import Spec

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A LocalCluster of 2 single-threaded worker processes, made as ``--scheduler local --workers 2`` makes it;
    every use of the score cache on a worker is written to ``cluster.cache_log``."""
    log = tmp_path_factory.mktemp("workers") / "cache-use.log"
    log.write_text("")
    executor = jobs.executor("local", 2)
    executor.client.register_plugin(RecordCacheUse(str(log)))
    executor.cache_log = log
    yield executor
    executor.close()


@pytest.fixture(autouse=True)
def toys():
    three = ["gender", "race", "religion"]
    registry.register("published-head", description="the first 12 released pairs of 3 attributes",
                      attributes=lambda: three, replace=True)(
        lambda attributes, built_dir: registry.DATASETS["published"].loader(three, built_dir)
        .groupby("attribute", sort=False).head(12).assign(dataset="published-head"))
    with registered():
        yield
    registry.DATASETS.pop("published-head", None)


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A new default score cache (the raw data stay where they are)."""
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def driver_stores(monkeypatch):
    """The pid of every ScoreCache.store call in this (the driver's) process."""
    pids = []
    original = ScoreCache.store

    def store(self, signature, items):
        pids.append(os.getpid())
        return original(self, signature, items)

    monkeypatch.setattr(ScoreCache, "store", store)
    return pids


def _workers_cache_use(cluster) -> list[str]:
    return cluster.cache_log.read_text().splitlines()


def test_two_workers_write_the_inprocess_tables_byte_for_byte(tmp_path, own_cache, cluster, driver_stores):
    kwargs = {"metrics": ["bleu", "chrf", "cider"], "datasets": ["published-head"], "n_resamples": 199,
              "progress": False}
    here = sweep.sweep("smoke", tmp_path / "here", cache=ScoreCache(tmp_path / "here.sqlite"), **kwargs)
    there = sweep.sweep("smoke", tmp_path / "there", scheduler=cluster, cache=ScoreCache(tmp_path / "there.sqlite"),
                        **kwargs)
    table = (tmp_path / "there" / "bias_published-head.csv").read_bytes()
    assert table == (tmp_path / "here" / "bias_published-head.csv").read_bytes()
    assert len(pd.read_csv(tmp_path / "there" / "bias_published-head.csv")) == 3 * 3
    # one job per metric; CIDEr-D (idf over the set) one per attribute, its corpus
    assert there["what"].tolist() == ["published-head"] * 2 + [f"published-head/{a}" for a in
                                                              ("gender", "race", "religion")]
    assert (there["status"] == "done").all() and there["job"].tolist() == here["job"].tolist()
    assert there["computed"].sum() == here["computed"].sum() == 2 * 72 + 72
    # the workers computed, the driver alone stored (5 one-chunk jobs, in process then on the cluster) and no
    # worker opened the cache
    assert _workers_cache_use(cluster) == []
    assert driver_stores == [os.getpid()] * 10


def test_a_worker_killed_mid_job_is_retried_with_the_same_result(tmp_path, own_cache, cluster, monkeypatch,
                                                                 driver_stores):
    monkeypatch.setattr(jobs, "CHUNK_SIZE", 4)  # the job's 10 pairs in 3 chunks: a worker dies during one of them
    marker = tmp_path / "died"
    spec = Spec("dies", "toy_job_dies_once", {"marker": str(marker)})
    kwargs = {"metrics": [spec], "datasets": ["toy-sweep"], "n_resamples": 199, "progress": False}
    there = sweep.sweep("smoke", tmp_path / "there", scheduler=cluster, cache=ScoreCache(tmp_path / "there.sqlite"),
                        **kwargs)
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker process died
    assert there[["status", "attempts", "computed"]].values.tolist() == [["done", 2, 10]]
    here = sweep.sweep("smoke", tmp_path / "here", cache=ScoreCache(tmp_path / "here.sqlite"), **kwargs)
    assert here["attempts"].tolist() == [1]
    assert (tmp_path / "there" / "bias_toy-sweep.csv").read_bytes() == (tmp_path / "here" / "bias_toy-sweep.csv").read_bytes()
    assert _workers_cache_use(cluster) == [] and set(driver_stores) == {os.getpid()}
    assert cluster.client.scheduler_info()["workers"]  # the nanny restarted the dead worker


def test_the_issue_command_writes_the_bias_commands_table(tmp_path, own_cache, capsys):
    """`metricbias sweep --profile smoke --metrics bleu,chrf --datasets published --scheduler local --workers 2`
    after `metricbias bias --dataset published --scores live --metrics bleu,chrf` (same cache: every job is
    skipped, the scores are the bias command's)."""
    bias_out = tmp_path / "bias_published.csv"
    assert cli.main(["bias", "--dataset", "published", "--scores", "live", "--metrics", "bleu,chrf",
                     "--out", str(bias_out)]) == 0
    assert cli.main(["sweep", "--profile", "smoke", "--metrics", "bleu,chrf", "--datasets", "published",
                     "--scheduler", "local", "--workers", "2", "--out", str(tmp_path / "sweep")]) == 0
    assert "2 cached job(s); 0 pairs computed, 3,772 from the cache" in capsys.readouterr().out
    assert (tmp_path / "sweep" / "bias_published.csv").read_bytes() == bias_out.read_bytes()


def test_a_scheduler_address_sends_the_jobs_to_that_clusters_workers(cluster):
    address = cluster.client.scheduler.address
    assert address.startswith("tcp://")
    with jobs.use(address, workers=2) as executor:
        assert isinstance(executor, jobs.DaskExecutor) and executor.slots == 2
        job, = jobs.run([jobs.Job(Overlap(), ["a b", "a c", "b"], ["a b c", "c", "b"])], None, chunk_size=1)
    assert job.scores.tolist() == [2.0, 1.0, 1.0] and job.status == "done"
    assert len(job.workers) >= 1 and not any(w.endswith(f":{os.getpid()}") for w in job.workers)
    assert cluster.client.scheduler_info()["workers"]  # closing the second client leaves the cluster up
