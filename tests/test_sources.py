import http.server
import pickle
import threading
from pathlib import Path

import pytest

from metricbias import sources
from metricbias.cli import main
from tests.conftest import write_registry

GOOD = b"alpha\tbeta\n1\t2\n"


def test_resolves_verified_file_from_data_raw(tmp_project):
    write_registry(tmp_project, {"demo/a.tsv": GOOD})
    (tmp_project / "data/raw/demo").mkdir(parents=True)
    (tmp_project / "data/raw/demo/a.tsv").write_bytes(GOOD)
    assert sources.path("demo/a.tsv").read_bytes() == GOOD
    assert sources.check() == [("demo/a.tsv", "ok", str(tmp_project / "data/raw/demo/a.tsv"))]


def test_mirror_is_used_and_fetch_copies_it(tmp_project, tmp_path, monkeypatch):
    write_registry(tmp_project, {"demo/a.tsv": GOOD})
    mirror = tmp_path / "mirror"
    (mirror / "demo").mkdir(parents=True)
    (mirror / "demo/a.tsv").write_bytes(GOOD)
    monkeypatch.setenv("METRICBIAS_MIRROR", str(mirror))
    assert sources.path("demo/a.tsv", download=False) == mirror / "demo/a.tsv"
    sources.fetch_all()
    assert (tmp_project / "data/raw/demo/a.tsv").read_bytes() == GOOD
    assert sources.path("demo/a.tsv") == tmp_project / "data/raw/demo/a.tsv"


def test_corrupted_file_is_an_error_naming_it(tmp_project):
    write_registry(tmp_project, {"demo/a.tsv": GOOD})
    (tmp_project / "data/raw/demo").mkdir(parents=True)
    (tmp_project / "data/raw/demo/a.tsv").write_bytes(GOOD + b"tampered")
    with pytest.raises(sources.SourceError, match=r"checksum mismatch for demo/a.tsv.*metricbias fetch"):
        sources.path("demo/a.tsv")
    assert sources.check()[0][1] == "corrupt"


def test_missing_file_is_an_error_with_a_fix(tmp_project):
    write_registry(tmp_project, {"demo/a.tsv": GOOD})
    with pytest.raises(sources.SourceError, match=r"missing source demo/a.tsv.*METRICBIAS_MIRROR"):
        sources.path("demo/a.tsv")
    assert not (tmp_project / "data/raw/demo/a.tsv").exists()  # nothing half-written
    assert sources.check()[0][1] == "missing"


def test_unknown_source_lists_known_folders(tmp_project):
    write_registry(tmp_project, {"demo/a.tsv": GOOD})
    with pytest.raises(sources.SourceError, match="unknown source 'nope/x'.*demo"):
        sources.path("nope/x")


def test_check_cli_prints_one_line_per_source(tmp_project, capsys):
    write_registry(tmp_project, {"demo/a.tsv": GOOD, "demo/b.tsv": b"b", "demo/c.tsv": b"c"})
    (tmp_project / "data/raw/demo").mkdir(parents=True)
    (tmp_project / "data/raw/demo/a.tsv").write_bytes(GOOD)
    (tmp_project / "data/raw/demo/c.tsv").write_bytes(b"not c")
    assert main(["fetch", "--check"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[:2] for ln in lines] == [["ok", "demo/a.tsv"], ["missing", "demo/b.tsv"], ["corrupt", "demo/c.tsv"]]


@pytest.fixture
def http_server(tmp_path):
    served = tmp_path / "served"
    served.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(served), **kw)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_from_canonical_url_is_verified(tmp_project, http_server):
    served, base = http_server
    (served / "a.tsv").write_bytes(GOOD)
    write_registry(tmp_project, {"demo/a.tsv": GOOD}, url=base + "/a.tsv")
    assert sources.path("demo/a.tsv").read_bytes() == GOOD
    assert (tmp_project / "data/raw/demo/a.tsv").exists()


def test_download_with_wrong_checksum_leaves_nothing(tmp_project, http_server):
    served, base = http_server
    (served / "a.tsv").write_bytes(b"something else")
    write_registry(tmp_project, {"demo/a.tsv": GOOD}, url=base + "/a.tsv")
    with pytest.raises(sources.SourceError, match="checksum mismatch"):
        sources.path("demo/a.tsv")
    assert not (tmp_project / "data/raw/demo").exists() or not any((tmp_project / "data/raw/demo").iterdir())


class _Evil:
    def __reduce__(self):
        import os
        return (os.system, ("echo pwned > /tmp/metricbias-pwned",))


def test_malicious_pickle_is_refused(tmp_path):
    bad = tmp_path / "evil.pkl"
    bad.write_bytes(pickle.dumps(_Evil()))
    with pytest.raises(sources.SourceError, match=r"evil.pkl: refused to unpickle (posix|os)\.system"):
        sources.safe_load_pickle(bad)
    assert not Path("/tmp/metricbias-pwned").exists()


def test_plain_pickle_loads(tmp_path):
    obj = {"a": [1, 2.5, None, True], "b": ("x", b"y"), "c": {1, 2}, "d": frozenset([3])}
    good = tmp_path / "good.pkl"
    good.write_bytes(pickle.dumps(obj, protocol=2))  # protocol 2 stores sets via builtins.set
    assert sources.safe_load_pickle(good) == obj


def test_numpy_object_in_pickle_is_refused(tmp_path):
    import numpy as np

    bad = tmp_path / "np.pkl"
    bad.write_bytes(pickle.dumps({"x": np.float64(1.0)}))
    with pytest.raises(sources.SourceError, match="refused to unpickle numpy"):
        sources.safe_load_pickle(bad)


def test_real_registry_is_complete_and_verified():
    """Every registered source is present (data/raw or mirror) with the right checksum."""
    from tests.conftest import real_raw_location

    real_raw_location()  # skips when there is no raw data at all
    statuses = sources.check()
    assert len(statuses) >= 70
    assert all(status == "ok" for _, status, _ in statuses), [s for s in statuses if s[1] != "ok"]


def test_real_pickles_load_through_the_restricted_unpickler():
    realsumm = sources.load_pickle("realsumm/data.pkl")
    wmt = sources.load_pickle("wmt19_darr/kk-en.pkl")
    assert isinstance(realsumm, dict) and len(realsumm) == 100
    assert isinstance(wmt, dict) and len(wmt) > 1000
