"""Shared fixtures. Tests build their own small files; real data comes through the source registry."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path

import pytest

from metricbias import paths, sources

REPO = Path(__file__).resolve().parents[1]


def real_raw_location() -> Path:
    """Where the real raw files are: the project's data/raw if fetched, else the mirror."""
    local = REPO / "data" / "raw"
    if (local / "metric_fairness" / "gender.tsv").exists():
        return local
    mirror = sources.mirror_dir()
    if mirror is None:
        pytest.skip("no raw data: run `metricbias fetch` or set METRICBIAS_MIRROR")
    return mirror


def write_registry(root: Path, entries: dict[str, bytes], url: str = "https://example.invalid/{path}") -> None:
    """A data/sources.tsv under ``root`` registering ``entries`` (path -> content)."""
    lines = ["path\tsha256\tbytes\turl\tlicence"]
    for rel, blob in entries.items():
        lines.append(f"{rel}\t{hashlib.sha256(blob).hexdigest()}\t{len(blob)}\t{url.format(path=rel)}\ttest")
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "data" / "sources.tsv").write_text("\n".join(lines) + "\n")


def write_crows_project(root: Path, crows: str, lexicons: dict[str, str], config: str) -> Path:
    """A project under ``root`` whose only raw source is the CrowS-Pairs file ``crows``, with the lexicon files
    ``lexicons`` (name -> YAML) and ``attributes.yml`` = ``config``. Returns the lexicon folder."""
    write_registry(root, {"crows_pairs/crows_pairs_anonymized.csv": crows.encode()})
    raw = root / "data" / "raw" / "crows_pairs"
    raw.mkdir(parents=True)
    (raw / "crows_pairs_anonymized.csv").write_text(crows)
    lex = root / "data" / "lexicons"
    lex.mkdir()
    for name, text in lexicons.items():
        (lex / f"{name}.yml").write_text(text)
    (lex / "attributes.yml").write_text(config)
    return lex


@pytest.fixture
def tmp_project(tmp_path, monkeypatch):
    """An empty project root (METRICBIAS_ROOT) with its own cache and no mirror."""
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    monkeypatch.setenv("METRICBIAS_ROOT", str(root))
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("METRICBIAS_MIRROR", "")
    return root


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A cache folder of the test's own (METRICBIAS_CACHE), for code that keeps results in the result cache."""
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def copy_book(root: Path) -> Path:
    """A copy of the book's sources (not its outputs) under ``root``."""
    for name in ("_config.yml", "_toc.yml", "notebooks", "book", "data", "models"):
        src = REPO / name
        if src.is_dir():
            # not the score packs: the smoke chapters score their few pairs live (tests/test_packs.py tests the packs)
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("_build", "chapters", "raw", "built", "*.ipynb",
                                                                            "packs"))
        else:
            root.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / name)
    shutil.copytree(REPO / "_static", root / "_static", ignore=shutil.ignore_patterns("data"))  # styles, not downloads
    return root


def _book_environment(setenv, root: Path, cache: Path) -> None:
    raw = real_raw_location()  # the checkout's raw data or mirror, found before the root moves to the copy
    setenv("METRICBIAS_ROOT", str(root))
    setenv("METRICBIAS_MIRROR", str(raw))
    setenv("METRICBIAS_CACHE", str(cache))


@pytest.fixture
def book_copy(tmp_path, monkeypatch):
    """A copy of the book's sources (not its outputs) to execute and build without touching the checkout."""
    root = copy_book(tmp_path / "book-root")
    _book_environment(monkeypatch.setenv, root, tmp_path / "cache")
    return root


#: the background build of the smoke book (started by :func:`pytest_sessionstart` or
#: :func:`pytest_collection_modifyitems`)
_SMOKE: dict = {}
SMOKE_BOOK_TIMEOUT = 3600


def _start_smoke_book() -> None:
    """Build the smoke book in a process of its own (``tests/smoke_book.py``): it builds while the other tests run."""
    import subprocess
    import sys
    import tempfile

    if _SMOKE:
        return
    try:
        real_raw_location()
    except pytest.skip.Exception:  # no raw data: the fixture skips the book tests
        return
    folder = Path(tempfile.mkdtemp(prefix="metricbias-smoke-book-"))
    log = (folder / "build.log").open("w", encoding="utf-8")
    _SMOKE.update(folder=folder, log=log, process=subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve().parent / "smoke_book.py"), str(folder)],
        stdout=log, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True))  # its kernels: one process group

    def watch(process=_SMOKE["process"]):
        if process.wait() == 0 and (folder / "outputs.json").is_file():
            _start_chromium(folder / "book-root" / "book" / "_build" / "html")

    threading.Thread(target=watch, daemon=True).start()


def _stop_smoke_book() -> None:
    import signal

    process = _SMOKE.get("process")
    if process is not None and process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)  # the build and its chapters' kernels
        process.wait()


def pytest_sessionstart(session):
    """Start the smoke book before collection, which keeps one core busy and leaves the other idle, when the run
    may read it: the whole suite, or tests/test_book.py named. Collection stops it if no collected test reads it."""
    tests = Path(__file__).resolve().parent
    here = Path(session.config.invocation_params.dir)
    for arg in session.config.args:
        if (here / arg.split("::", 1)[0]).resolve() in (tests, tests.parent, tests / "test_book.py"):
            _start_smoke_book()
            return


#: the fixtures that read the smoke book, in the order their tests run: last, since the book builds meanwhile; a
#: test of chapter 3's scores as soon as that chapter has run, then those of the built book, Chromium's the very last
#: (it measures the pages in a thread from the moment the book is built)
_SMOKE_FIXTURES = ("smoke_chapter_3_cache", "smoke_book", "smoke_pages_in_chromium")


def _smoke_rank(item) -> int:
    names = getattr(item, "fixturenames", ())
    return max((i + 1 for i, name in enumerate(_SMOKE_FIXTURES) if name in names), default=0)


def pytest_collection_modifyitems(session, config, items):
    """Run the tests that read the smoke book last (starting the book if it is not building yet)."""
    if not any(_smoke_rank(item) for item in items):
        _stop_smoke_book()  # started before collection for a run that turned out not to read it
        return
    items.sort(key=_smoke_rank)  # stable: the other tests keep their order
    _start_smoke_book()


def pytest_sessionfinish(session, exitstatus):
    _stop_smoke_book()  # the session ended early (-x, Ctrl-C): stop the build
    if "thread" in _CHROMIUM:  # a run without the Chromium test: let the measurement end before its pages go
        _CHROMIUM["thread"].join(timeout=600)
    if _SMOKE:
        _SMOKE["log"].close()
        shutil.rmtree(_SMOKE["folder"], ignore_errors=True)


def _smoke_failed(folder: Path, code: int) -> None:
    _SMOKE["log"].flush()
    tail = (folder / "build.log").read_text(encoding="utf-8", errors="replace")[-4000:]
    pytest.fail(f"the smoke book failed (exit {code}):\n{tail}")


@pytest.fixture
def smoke_chapter_3_cache(tmp_path):
    """A copy, in ``tmp_path / "cache"``, of the smoke book's score cache once its chapter 3 has run (the other
    chapters may still be running): the scores ``make book`` leaves for a reader who forks chapter 3."""
    import sqlite3
    import time

    if not _SMOKE:
        pytest.skip("the smoke book was not started (no raw data)")
    folder, process = _SMOKE["folder"], _SMOKE["process"]
    done = folder / "book-root" / "book" / "chapters" / "03_metrics_and_backbones.ipynb"
    waited = time.monotonic()
    while not done.exists():
        if process.poll() not in (None, 0):
            _smoke_failed(folder, process.returncode)
        if process.poll() == 0 or time.monotonic() - waited > SMOKE_BOOK_TIMEOUT:
            pytest.fail(f"the smoke book did not execute chapter 3 ({done} missing)")
        time.sleep(0.5)
    out, cache = tmp_path / "cache", folder / "cache"
    for path in sorted(p for p in cache.rglob("*") if p.is_file()):
        rel = path.relative_to(cache)
        if rel.parts[0] == "run" or path.name.endswith(("-wal", "-shm")):
            continue
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".sqlite":  # a consistent copy while the book's other chapters write on
            source, copy = sqlite3.connect(path), sqlite3.connect(target)
            try:
                source.backup(copy)
            finally:
                source.close()
                copy.close()
        else:
            shutil.copy2(path, target)
    return out


@pytest.fixture(scope="module")
def smoke_book():
    """Every chapter executed with the smoke profile and the book built (strict), once for the tests that read the
    built pages: ``(book root, executed notebooks)``. The build (minutes) started with the session, in a process of
    its own; this waits for it."""
    import json
    import subprocess

    if not _SMOKE:
        pytest.skip("the smoke book was not started (no raw data)")
    try:
        code = _SMOKE["process"].wait(timeout=SMOKE_BOOK_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the smoke book did not build in {SMOKE_BOOK_TIMEOUT} s")
    folder = _SMOKE["folder"]
    if code != 0:
        _smoke_failed(folder, code)
    outputs = [Path(p) for p in json.loads((folder / "outputs.json").read_text(encoding="utf-8"))]
    return folder / "book-root", outputs


#: the built smoke pages measured in headless Chromium (``tests/browser.py``), in a thread of the session
_CHROMIUM: dict = {}


_CHROMIUM_LOCK = threading.Lock()


def _start_chromium(html_dir: Path) -> None:
    """Measure the built pages in a thread, each width in a Chromium of its own, from the moment the book is built:
    they render while the last book tests run (the cores are otherwise idle by then)."""
    import browser

    with _CHROMIUM_LOCK:
        if _CHROMIUM or browser.chromium() is None:
            return
        pages = browser.book_pages(html_dir)
        results: dict = {}

        def one(width):
            try:
                results[width] = browser.measure(pages, width)
            except Exception as exc:  # re-raised by the fixture, in the test that reads it
                _CHROMIUM["error"] = exc

        def measure():
            widths = [threading.Thread(target=one, args=(width,)) for width in browser.WIDTHS]
            for thread in widths:
                thread.start()
            for thread in widths:
                thread.join()
            _CHROMIUM["results"] = results

        _CHROMIUM.update(pages=pages, thread=threading.Thread(target=measure, daemon=True))
        _CHROMIUM["thread"].start()


@pytest.fixture
def smoke_pages_in_chromium(smoke_book):
    """``(pages, {width: browser.measure(pages, width)})`` of the built smoke book in headless Chromium."""
    import browser

    if browser.chromium() is None:
        pytest.skip(f"no Chromium to render the pages; install Debian's package: {browser.INSTALL}")
    _start_chromium(smoke_book[0] / "book" / "_build" / "html")  # started when the book was built, unless just now
    _CHROMIUM["thread"].join()
    if "error" in _CHROMIUM:
        raise _CHROMIUM["error"]
    return _CHROMIUM["pages"], _CHROMIUM["results"]


# --- tiny neural models (issue 4): built once per session, random weights, real tokenizers ---

@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    from tiny_models import save_tiny_bert

    return save_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_bert_regressor(tmp_path_factory) -> Path:
    from tiny_models import save_tiny_bert_regressor

    return save_tiny_bert_regressor(tmp_path_factory.mktemp("tiny-bert-regressor"))


@pytest.fixture(scope="session")
def tiny_bart(tmp_path_factory) -> Path:
    from tiny_models import save_tiny_bart

    return save_tiny_bart(tmp_path_factory.mktemp("tiny-bart"))
