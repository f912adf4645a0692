"""Execute the chapters: MyST notebooks -> papermill -> ``book/chapters/*.ipynb``.

Chapters are taken in ``_toc.yml`` order. Each ``book/chapters/<stem>`` entry of
the table of contents is built from ``notebooks/<stem>.md`` (jupytext), executed
by papermill with the profile's parameters, and written atomically; the first
failure stops the run with an error naming the chapter and the cell, and the
failed notebook is kept under the cache folder for inspection.

While a chapter runs, the terminal shows a line as each code cell starts (chapter,
cell, elapsed time, and the previous run's time for the chapter as an estimate),
the library's progress bars (:mod:`metricbias.progress` writes them to a file that the
runner copies to the terminal as it grows; they never enter the notebook), the kernel's
standard error as it comes (warnings), and a reminder line each minute of a long cell. Each successful chapter's time and its
cells' times are kept in ``<cache>/run/timings.json`` per profile: the next run's
estimate, and what ``benchmarks/profile_chapters.py`` reports.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import profiles
from . import progress as bars
from .paths import atomic_path, cache_dir, project_root

#: seconds between the reminder lines of a long-running cell
HEARTBEAT = 60

CHAPTER_DIR = Path("book") / "chapters"
NOTEBOOK_DIR = Path("notebooks")


class ChapterError(RuntimeError):
    """A chapter failed to execute."""


@dataclass(frozen=True)
class Chapter:
    stem: str
    source: Path  # notebooks/<stem>.md
    output: Path  # book/chapters/<stem>.ipynb


def _toc_files(node) -> list[str]:
    files = []
    if isinstance(node, dict):
        if "file" in node:
            files.append(str(node["file"]))
        for key in ("parts", "chapters", "sections"):
            for child in node.get(key, []) or []:
                files.extend(_toc_files(child))
    elif isinstance(node, list):
        for child in node:
            files.extend(_toc_files(child))
    return files


def chapters(root: Path | None = None) -> list[Chapter]:
    """The executable chapters of ``_toc.yml``, in order."""
    root = root or project_root()
    toc_path = root / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    out = []
    for entry in _toc_files(toc):
        entry_path = Path(entry)
        if entry_path.parent != CHAPTER_DIR:
            continue
        stem = entry_path.stem if entry_path.suffix else entry_path.name
        source = root / NOTEBOOK_DIR / f"{stem}.md"
        if not source.exists():
            raise ChapterError(f"_toc.yml lists {entry} but its source {source} does not exist")
        out.append(Chapter(stem, source, root / CHAPTER_DIR / f"{stem}.ipynb"))
    return out


def _select(all_chapters: list[Chapter], only) -> list[Chapter]:
    if not only:
        return all_chapters
    wanted = [only] if isinstance(only, str) else list(only)
    chosen = [c for c in all_chapters if any(c.stem == w or c.stem.startswith(f"{w}_") for w in wanted)]
    if not chosen:
        raise ChapterError(f"no chapter matches {wanted}; chapters: {', '.join(c.stem for c in all_chapters)}")
    return chosen


def timings_path() -> Path:
    return cache_dir() / "run" / "timings.json"


def load_timings() -> dict:
    """``{profile: {chapter: {"seconds", "finished", "cells": [{"cell", "seconds", "source"}]}}}`` of past runs."""
    try:
        return json.loads(timings_path().read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _save_timing(profile: str, stem: str, seconds: float, cells: list[dict]) -> None:
    table = load_timings()
    table.setdefault(profile, {})[stem] = {"seconds": round(seconds, 2), "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
                                           "cells": cells}
    with atomic_path(timings_path(), suffix=".json") as tmp:
        tmp.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m{seconds % 60:02d}s" if seconds >= 3600 else \
        f"{seconds // 60}m{seconds % 60:02d}s"


def _first_line(source: str) -> str:
    lines = [line.strip() for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]
    line = lines[0] if lines else ""
    return line if len(line) <= 70 else line[:67] + "..."


class _Progress:
    """One chapter's progress on the terminal; papermill writes the kernel's stderr through :meth:`write`."""

    def __init__(self, stem: str, n_cells: int, estimate: float | None, bar_file: Path, stream=None):
        self.stem, self.n_cells, self.estimate = stem, n_cells, estimate
        self.stream = stream or sys.stderr
        bar_file.write_text("")
        self.bars = open(bar_file, encoding="utf-8", errors="replace")  # the kernel's progress bars
        self.start = time.perf_counter()
        self.cell = None  # (index, source line, start time) of the running cell
        self.cells: list[dict] = []
        self._at_line_start = True
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)
        self._beat.start()

    def _elapsed(self) -> str:
        done = time.perf_counter() - self.start
        est = f"last run {_clock(self.estimate)}" if self.estimate else "no earlier run"
        return f"{_clock(done)} elapsed ({est})"

    def _line(self, text: str) -> None:
        with self._lock:
            self.stream.write(("" if self._at_line_start else "\n") + text + "\n")
            self.stream.flush()
            self._at_line_start = True

    def write(self, text: str) -> None:  # the kernel's stderr, as it arrives
        if text:
            with self._lock:
                self.stream.write(text)
                self.stream.flush()
                self._at_line_start = text.endswith("\n")

    def flush(self) -> None:
        self.stream.flush()

    def cell_start(self, cell, index: int) -> None:
        if cell.get("cell_type") != "code":
            return
        self.cell = (index, _first_line(cell.source), time.perf_counter())
        self._line(f"  {self.stem} | cell {index}/{self.n_cells} | {self._elapsed()} | {self.cell[1]}")

    def cell_complete(self, cell, index: int) -> None:
        if self.cell and self.cell[0] == index:
            self.cells.append({"cell": index, "seconds": round(time.perf_counter() - self.cell[2], 3),
                               "source": self.cell[1]})
        self.cell = None

    def _heartbeat(self) -> None:
        said = time.perf_counter()
        while not self._stop.wait(0.2):
            self.write(self.bars.read())
            cell = self.cell
            now = time.perf_counter()
            if cell and now - cell[2] >= HEARTBEAT and now - said >= HEARTBEAT:
                said = now
                self._line(f"  {self.stem} | cell {cell[0]}/{self.n_cells} still running, "
                           f"{_clock(now - cell[2])} in this cell | {self._elapsed()}")

    def close(self) -> None:
        self._stop.set()
        self._beat.join()
        self.write(self.bars.read())
        self.bars.close()
        if not self._at_line_start:
            self.write("\n")


def _register_engine() -> str:
    """A papermill engine that reports cell starts and ends to a :class:`_Progress` (``progress=`` keyword)."""
    from papermill.engines import NBClientEngine, papermill_engines

    class ProgressEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, progress=None, **kwargs):
            if progress is not None:
                progress.n_cells = len(nb_man.nb.cells)  # papermill's injected parameters cell included
                start, complete = nb_man.cell_start, nb_man.cell_complete

                def cell_start(cell, cell_index=None, **kw):
                    progress.cell_start(cell, cell_index)
                    return start(cell, cell_index, **kw)

                def cell_complete(cell, cell_index=None, **kw):
                    progress.cell_complete(cell, cell_index)
                    return complete(cell, cell_index, **kw)

                nb_man.cell_start, nb_man.cell_complete = cell_start, cell_complete
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    papermill_engines.register("metricbias", ProgressEngine)
    return "metricbias"


def execute_chapter(chapter: Chapter, profile: str, log=print, progress: bool = True) -> Path:
    """Execute one chapter; with ``progress``, show its cells, the kernel's stderr and the time on stderr."""
    import jupytext
    import papermill as pm

    nb = jupytext.read(chapter.source)
    # jupytext leaves kernelspec-less notebooks; papermill needs one
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    work = cache_dir() / "run"
    work.mkdir(parents=True, exist_ok=True)
    src_ipynb = work / f"{chapter.stem}.input.ipynb"
    jupytext.write(nb, src_ipynb)
    declared = pm.inspect_notebook(str(src_ipynb))
    params = {k: v for k, v in profiles.parameters(profile, chapter.stem).items() if k in declared}
    failed = work / f"{chapter.stem}.failed.ipynb"
    previous = load_timings().get(profile, {}).get(chapter.stem, {}).get("seconds")
    shown = _Progress(chapter.stem, len(nb.cells), previous, work / f"{chapter.stem}.progress") if progress else None
    saved_env = {k: os.environ.get(k) for k in (bars.FILE_ENV, bars.COLUMNS_ENV)}
    if shown:  # the kernel inherits these: the library's bars go to the file shown copies to the terminal
        os.environ[bars.FILE_ENV] = str(shown.bars.name)
        os.environ[bars.COLUMNS_ENV] = str(max(40, min(120, shutil.get_terminal_size((100, 24)).columns)))
    start = time.perf_counter()
    try:
        with atomic_path(chapter.output, suffix=".ipynb") as tmp:
            try:
                pm.execute_notebook(
                    str(src_ipynb), str(tmp), parameters=params, kernel_name="python3",
                    cwd=str(chapter.source.parent), progress_bar=False, log_output=False,
                    engine_name=_register_engine(), progress=shown, stderr_file=shown,
                )
            except pm.PapermillExecutionError as exc:
                shutil.copyfile(tmp, failed)
                raise ChapterError(
                    f"chapter {chapter.stem} ({chapter.source}) failed in cell {exc.cell_index} "
                    f"(execution count {exc.exec_count}): {exc.ename}: {exc.evalue}\n"
                    f"cell source:\n{exc.source}\nexecuted notebook kept at {failed}"
                ) from None
    finally:
        if shown:
            shown.close()
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    seconds = time.perf_counter() - start
    _save_timing(profile, chapter.stem, seconds, shown.cells if shown else [])
    log(f"  {chapter.stem}: executed with profile {profile} {params} in {seconds:.1f} s "
        f"-> {chapter.output}")
    return chapter.output


def run(profile: str = "offline", only=None, log=print, progress: bool = True) -> list[Path]:
    """Execute the chapters (all, or those named in ``only``) in ``_toc.yml`` order."""
    profiles.parameters(profile)  # validates the name before any work
    selected = _select(chapters(), only)
    log(f"running {len(selected)} chapter(s) with profile {profile}")
    return [execute_chapter(c, profile, log=log, progress=progress) for c in selected]


def build_book(root: Path | None = None, strict: bool = True) -> Path:
    """``jupyter-book build`` of the executed chapters; HTML lands in ``book/_build/html``."""
    root = root or project_root()
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root), "--path-output", str(root / "book")]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ChapterError(f"jupyter-book build failed (exit {proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    return root / "book" / "_build" / "html" / "index.html"
