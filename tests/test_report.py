"""The one-page audit report: its content, no external resource, and a render in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import metricbias as mb
from metricbias.cli import main
from metricbias.datasets import published
from metricbias.paths import OutputPathError

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def overlap(candidates, references):
    """Share of a candidate's words found in its reference (a plain-function metric)."""
    return [len(set(c.split()) & set(r.split())) / max(1, len(set(c.split()))) for c, r in zip(candidates, references)]


class _Links(HTMLParser):
    """Every URL an element's attribute points to, and every tag."""

    def __init__(self):
        super().__init__()
        self.urls, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href", "xlink:href", "srcset", "poster", "data") and v]


def external(page: str) -> list[str]:
    """URLs of ``page`` a browser would fetch from a network: attributes and CSS ``url(...)`` / ``@import``."""
    parser = _Links()
    parser.feed(page)
    found = [u for u in parser.urls if re.match(r"\s*(https?:)?//", u, re.I)]
    found += re.findall(r"url\(\s*['\"]?\s*((?:https?:)?//[^)'\"]+)", page, re.I)
    found += re.findall(r"@import\s+['\"]?([^;'\"]+)", page, re.I)
    return found


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "audit.html"
    table = mb.audit_report(overlap, path, attributes=["gender", "age"], sample_size=12, n_resamples=99,
                            references=["bleu", "chrf"], cache=False, command="metricbias audit --metric x:overlap")
    return path, table


def test_report_content(report):
    path, table = report
    page = path.read_text(encoding="utf-8")
    assert list(table.columns) == ["attribute", "metric", "measure", "value", "ci_low", "ci_high", "n_pairs",
                                   "signature"]
    assert set(table["n_pairs"]) == {12}
    # the audit, the same as mb.audit on the same sample
    plain = mb.audit(overlap, attributes=["gender", "age"], sample_size=12, n_resamples=99, cache=False)
    assert table.drop(columns="signature").equals(plain.drop(columns="signature"))
    for text in ("Bias audit: overlap", table["signature"].iloc[0], "metricbias audit --metric x:overlap",
                 "Reference configurations", "<td>bleu</td>", "<td>chrf</td>", "<svg"):
        assert text in page
    # where the metric sits among the 29 released metrics, on the same sampled pairs
    pairs = mb.load_pairs("published", ["age"], sample_size=12, seed=0)
    released = mb.bias_table(published.scores(["age"]).query("pair_id in @ids", local_dict={"ids": set(pairs["pair_id"])}),
                             n_resamples=0)
    assert len(released) == 29
    ours = table.query("attribute == 'age' and measure == 'bias'")["value"].iloc[0]
    rank = int((released["bias"] < ours).sum()) + 1
    assert re.search(rf"<td>age</td>.*?<td>{rank} of 30</td>", page, re.S)
    # dataset sizes: the sample and the whole set
    assert re.search(r"<td>gender</td><td>12</td><td>396</td>", page)


def test_report_loads_nothing_external(report):
    path, _ = report
    page = path.read_text(encoding="utf-8")
    assert external(page) == []
    assert "<script" not in page and "<link" not in page and "<iframe" not in page
    # the check itself finds what it is meant to find
    assert external('<img src="https://example.com/a.png"><style>@import "//cdn.example/x.css"</style>') == [
        "https://example.com/a.png", "//cdn.example/x.css"]


def _chromium(page: Path, workdir: Path) -> tuple[str, list[str]]:
    """Chromium's DOM of ``page`` and the network URLs the page itself requested (from Chromium's net log)."""
    log = workdir / f"{page.stem}.netlog.json"
    run = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--disable-component-update", f"--user-data-dir={workdir / 'profile'}",
                          f"--log-net-log={log}", "--dump-dom", page.resolve().as_uri()],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    events = json.loads(log.read_text())["events"]
    # requests a file:// page made (Chromium's own background requests have other isolation keys)
    urls = [e["params"]["url"] for e in events
            if str(e.get("params", {}).get("network_isolation_key", "")).startswith("file://")
            and "url" in e["params"] and not e["params"]["url"].startswith(("file:", "data:"))]
    return run.stdout, urls


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: apt-get install chromium")
def test_report_renders_in_headless_chromium(report, tmp_path):
    path, table = report
    dom, requested = _chromium(path, tmp_path)
    assert "Bias audit: overlap" in dom and "<svg" in dom and table["signature"].iloc[0] in dom
    assert requested == []
    # the same check sees a page that does fetch something
    control = tmp_path / "control.html"
    control.write_text('<html><body><img src="http://127.0.0.1:9/missing.png"></body></html>')
    assert _chromium(control, tmp_path)[1] == ["http://127.0.0.1:9/missing.png"]


def test_unwritable_report_fails_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    status = main(["audit", "--metric", "bleu", "--out", str(tmp_path / "out.csv"),
                   "--report", str(blocker / "report.html")])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--report" in err[0] and "is a file" in err[0]
    assert not (tmp_path / "out.csv").exists()
    with pytest.raises(OutputPathError, match="--report"):
        mb.audit_report(overlap, blocker / "r.html")


def test_the_audited_metric_is_not_its_own_reference(tmp_path):
    path = tmp_path / "bleu.html"
    mb.audit_report("bleu", path, attributes=["age"], sample_size=8, n_resamples=0, references=["bleu", "chrf"],
                    cache=False)
    page = path.read_text(encoding="utf-8")
    assert "<td>chrf</td>" in page and "<td>bleu</td>" not in page
    assert re.search(r"<td>age</td>(<td>[^<]*</td>){3}<td>\d of 2</td>", page)  # ranked among chrF alone
