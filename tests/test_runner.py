"""`metricbias run` on a one-chapter book: progress lines, the kernel's tqdm bars, timings, failures."""

import gc
import json
import textwrap
import warnings

import nbformat
import pytest

from metricbias.book import runner

CHAPTER = textwrap.dedent('''\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
    kernelspec:
      name: python3
      display_name: Python 3
      language: python
    ---

    # A chapter

    ```{code-cell} ipython3
    :tags: [parameters]
    profile = "offline"
    ```

    ```{code-cell} ipython3
    # a long loop of the library shows a tqdm bar
    import time
    from tqdm import tqdm
    for _ in tqdm(range(3), desc="scoring pairs"):
        time.sleep(0.3)
    ```

    ```{code-cell} ipython3
    # the library's bars reach the terminal, never the notebook, even when a chapter asks for none
    from metricbias.progress import tqdm as library_bar
    for _ in library_bar(range(4), desc="library loop", disable=True):
        time.sleep(0.3)
    ```

    ```{code-cell} ipython3
    time.sleep(2.5)  # a long cell without a bar: the heartbeat speaks
    print("done")
    ```
    ''')


@pytest.fixture
def tiny_book(tmp_path, monkeypatch):
    root = tmp_path / "book-root"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n- file: book/chapters/01_tiny\n")
    (root / "notebooks" / "01_tiny.md").write_text(CHAPTER)
    monkeypatch.setenv("METRICBIAS_ROOT", str(root))
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(runner, "HEARTBEAT", 1)
    return root


def test_progress_shows_chapter_cell_time_estimate_and_the_kernels_bars(tiny_book, capfd):
    runner.run(profile="smoke", log=lambda *_: None)
    err = capfd.readouterr().err
    assert "01_tiny | cell 2/" in err and "no earlier run" in err and "import time" in err
    assert "scoring pairs: 100%" in err  # the kernel's stderr reaches the terminal as it comes
    assert "still running" in err and "in this cell" in err
    assert "library loop: 100%" in err
    assert "done" not in err  # the cells' standard output stays in the notebook
    nb = nbformat.read(tiny_book / "book" / "chapters" / "01_tiny.ipynb", as_version=4)
    outputs = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "scoring pairs: 100%" in outputs and "library loop" not in outputs
    timings = json.loads(runner.timings_path().read_text())["smoke"]["01_tiny"]
    assert timings["seconds"] > 2.5
    slow = [c for c in timings["cells"] if c["source"].startswith("time.sleep(2.5)")]
    assert len(slow) == 1 and slow[0]["seconds"] >= 2.5
    runner.run(profile="smoke", log=lambda *_: None, force=True)
    assert f"(last run {runner._clock(timings['seconds'])})" in capfd.readouterr().err


QUICK = CHAPTER.split("```{code-cell} ipython3\n# a long loop")[0] + '```{code-cell} ipython3\nprint("done")\n```\n'


def test_a_rerun_keeps_chapters_whose_inputs_are_unchanged_and_runs_the_others(tiny_book):
    """A warm `make book` executes only what changed; `--force` executes anyway."""
    from metricbias.book import chapter_inputs

    md = tiny_book / "notebooks" / "01_tiny.md"
    md.write_text(QUICK)
    out = tiny_book / "book" / "chapters" / "01_tiny.ipynb"
    said = []

    def run(**kw):
        said.clear()
        before = out.stat().st_mtime_ns if out.exists() else None
        runner.run(profile="smoke", log=said.append, progress=False, **kw)
        return out.stat().st_mtime_ns != before  # executed again

    assert run()
    stamp = chapter_inputs.recorded(out)
    assert stamp and len(stamp) == 64
    assert not run() and any("kept 1 chapter(s)" in line and "01_tiny" in line for line in said)
    assert "running 0 chapter(s)" in said[-1]
    assert run(force=True) and chapter_inputs.recorded(out) == stamp
    md.write_text(QUICK.replace('print("done")', 'print("done!")'))
    assert run() and chapter_inputs.recorded(out) != stamp


def test_the_inputs_hash_covers_notebook_parameters_library_models_data_packages_and_recompute(tiny_book,
                                                                                                  monkeypatch):
    """What `chapter_inputs` hashes, without executing anything: the raw mirror and the built data are not inputs
    (data/sources.tsv fixes them), the content of models/ is, and so are the packages and METRICBIAS_RECOMPUTE."""
    from metricbias.book import chapter_inputs

    chapter = runner.chapters()[0]
    nb, _ = runner.prepare(chapter, "smoke")
    base = chapter_inputs.shared()
    again, _ = runner.prepare(chapter, "smoke")  # cell ids are drawn anew: not an input
    assert chapter_inputs.stamp(again, base) == chapter_inputs.stamp(nb, base)
    other, _ = runner.prepare(chapter, "smoke", {"profile": "paper"})
    assert chapter_inputs.stamp(other, base) != chapter_inputs.stamp(nb, base)
    seen = {base}

    def changed() -> bool:
        now = chapter_inputs.shared()
        new = now not in seen
        seen.add(now)
        return new

    (tiny_book / "models").mkdir()
    (tiny_book / "models" / "weights.bin").write_bytes(b"1")
    assert changed()
    (tiny_book / "models" / "weights.bin").write_bytes(b"2")  # same size: the content counts
    assert changed()
    (tiny_book / "data" / "raw").mkdir(parents=True)
    (tiny_book / "data" / "raw" / "mirror.txt").write_text("raw files are fixed by data/sources.tsv")
    (tiny_book / "data" / "built").mkdir()
    (tiny_book / "data" / "built" / "gender.tsv").write_text("built from them by the library's code")
    assert not changed()
    (tiny_book / "data" / "sources.tsv").write_text("mirror.txt\t0\n")
    assert changed()
    monkeypatch.setenv("METRICBIAS_RECOMPUTE", "1")
    assert changed()
    monkeypatch.setenv("METRICBIAS_RECOMPUTE", "0")  # as unset
    assert not changed()
    monkeypatch.setattr(chapter_inputs, "_packages", lambda: ["numpy==0.0"])
    assert changed()
    bad = tiny_book / "not-a-notebook.ipynb"
    for text in ("{}", "not json", '{"metadata": {"metricbias": 1}}'):
        bad.write_text(text)
        assert chapter_inputs.recorded(bad) is None
    assert chapter_inputs.recorded(tiny_book / "missing.ipynb") is None


MEETING = QUICK.replace('print("done")', textwrap.dedent('''\
    import os, pathlib, time
    here, other = pathlib.Path(os.environ["MEET"]) / "@ME@", pathlib.Path(os.environ["MEET"]) / "@OTHER@"
    here.touch()
    for _ in range(600):  # wait for the other chapter: it runs at the same time
        if other.exists():
            break
        time.sleep(0.1)
    assert other.exists(), "the other chapter never started"
    @FAIL@
    '''))


def meeting(me: str, other: str, fail: str = "") -> str:
    return MEETING.replace("@ME@", me).replace("@OTHER@", other).replace("@FAIL@", fail)


def test_jobs_run_chapters_side_by_side_and_the_first_failure_stops_the_run(tiny_book, tmp_path, monkeypatch):
    """`metricbias run --jobs 2`: two chapters that each wait for the other finish only if they run at once;
    each records its timing (the table is shared); a failing chapter's error is the run's."""
    monkeypatch.setenv("MEET", str(tmp_path))
    (tiny_book / "notebooks" / "01_tiny.md").write_text(meeting("a", "b"))
    (tiny_book / "notebooks" / "02_other.md").write_text(meeting("b", "a"))
    (tiny_book / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n- file: book/chapters/01_tiny\n"
                                        "- file: book/chapters/02_other\n")
    said = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outputs = runner.run(profile="smoke", log=said.append, jobs=2)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]  # each child's pipe was closed
    assert [p.name for p in outputs] == ["01_tiny.ipynb", "02_other.ipynb"] and all(p.exists() for p in outputs)
    assert sum("starting" in line for line in said) == 2
    assert set(runner.load_timings()["smoke"]) == {"01_tiny", "02_other"}
    for name in "ab":
        (tmp_path / name).unlink()
    (tiny_book / "notebooks" / "02_other.md").write_text(
        meeting("b", "a", 'raise RuntimeError("boom in two")'))
    with pytest.raises(runner.ChapterError, match=r"chapter 02_other .* failed in cell \d+.*boom in two"):
        runner.run(profile="smoke", log=lambda *_: None, jobs=2, force=True)
    assert "boom" not in (tiny_book / "book" / "chapters" / "02_other.ipynb").read_text()
    assert not list((tiny_book / "book" / "chapters").glob(".*"))  # no partial notebook left
    for name in "ab":
        (tmp_path / name).unlink(missing_ok=True)
    (tiny_book / "notebooks" / "02_other.md").write_text(
        meeting("b", "a", "os.kill(os.getpid(), 9)"))  # an error that does not name the chapter: the run does
    with pytest.raises(runner.ChapterError, match=r"^chapter 02_other: .*[Kk]ernel died"):
        runner.run(profile="smoke", log=lambda *_: None, jobs=2, force=True)
    with pytest.raises(ValueError, match="--jobs 0"):
        runner.run(profile="smoke", jobs=0)


def test_the_longest_chapters_start_first_and_share_the_cores(monkeypatch):
    """With --jobs, a fresh clone starts chapter_profiles.START_FIRST first (then _toc.yml order); a recorded run,
    its longest chapters first; each child gets its share of the cores unless OMP_NUM_THREADS is set."""
    from metricbias.book import chapter_lanes, chapter_profiles

    chapters = runner.chapters()
    stems = [c.stem for c in chapter_lanes.start_order(chapters, {})]
    assert stems[:len(chapter_profiles.START_FIRST)] == list(chapter_profiles.START_FIRST)
    rest = [c.stem for c in chapters if c.stem not in chapter_profiles.START_FIRST]
    assert stems[len(chapter_profiles.START_FIRST):] == rest and sorted(stems) == sorted(c.stem for c in chapters)
    timed = {c.stem: {"seconds": float(len(c.stem) % 5)} for c in chapters}
    order = [c.stem for c in chapter_lanes.start_order(chapters, timed)]
    assert [timed[s]["seconds"] for s in order] == sorted((timed[s]["seconds"] for s in order), reverse=True)
    assert [c.stem for c in chapter_lanes.start_order(chapters, {**timed, chapters[0].stem: {}})] == stems
    monkeypatch.setenv("METRICBIAS_RECOMPUTE", "1")  # every score live: chapter 3, the longest then, first
    live = [c.stem for c in chapter_lanes.start_order(chapters, {})]
    assert live[:len(chapter_profiles.START_FIRST_LIVE)] == list(chapter_profiles.START_FIRST_LIVE) == [
        "03_metrics_and_backbones", "04_bias_measures", "07_gender_swap", "05_association_tests"]
    monkeypatch.delenv("METRICBIAS_RECOMPUTE")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(chapter_lanes.os, "cpu_count", lambda: 8)
    assert chapter_lanes.thread_env(2) == {"OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "4"}
    assert chapter_lanes.thread_env(16)["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert chapter_lanes.thread_env(2) == {}
