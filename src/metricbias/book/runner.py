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

**Parameters are baked, not injected.** The profile's parameters, with the reader's
``-p key=value`` merged over them, are written into the chapter's own ``parameters``
cell (:func:`prepare`), so papermill injects no second cell and an executed chapter
rerun with plain ``papermill ... -p seed 1`` keeps the profile's other values. The
parameters cell is removed from the page; a cell after it (:func:`metricbias.book.records.start`)
keeps the values and the command that reruns the chapter for the Reproducibility appendix and shows a one-line
link to it. Every other code cell is
folded (``hide-input``): the page reads as text, figures and tables, code one click away.
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from .. import progress as bars
from ..jobs import LOG_ENV
from ..paths import atomic_path, cache_dir, file_lock, project_root
from . import chapter_profiles, records
from .records import load_timings, timings_path  # runs are timed here; the appendix shows them

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


def select(all_chapters: list[Chapter], only) -> list[Chapter]:
    if not only:
        return all_chapters
    wanted = [only] if isinstance(only, str) else list(only)
    chosen = [c for c in all_chapters if any(c.stem == w or c.stem.startswith(f"{w}_") for w in wanted)]
    if not chosen:
        raise ChapterError(f"no chapter matches {wanted}; chapters: {', '.join(c.stem for c in all_chapters)}")
    return chosen


def job_profile(path: Path) -> list[dict]:
    """The scoring jobs logged in ``path`` (``jobs.LOG_ENV``), summed per (metric, what), slowest first."""
    total: dict = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            job = json.loads(line)
        except json.JSONDecodeError:  # a kernel killed mid-write: the rest still counts
            continue
        row = total.setdefault((job["metric"], job["what"]), {"metric": job["metric"], "what": job["what"],
                                                                "pairs": 0, "computed": 0, "seconds": 0.0})
        for key in ("pairs", "computed", "seconds"):
            row[key] += job[key]
    rows = sorted(total.values(), key=lambda r: -r["seconds"])
    return [{**r, "seconds": round(r["seconds"], 2)} for r in rows]


def _save_timing(profile: str, stem: str, seconds: float, cells: list[dict], jobs: list[dict],
                 packs: dict | None = None) -> None:
    timings_path().parent.mkdir(parents=True, exist_ok=True)
    with file_lock(timings_path().with_suffix(".lock")):  # chapters that run side by side (--jobs) both write it
        table = load_timings()
        table.setdefault(profile, {})[stem] = {"seconds": round(seconds, 2),
                                               "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
                                               "cells": cells, "jobs": jobs, "packs": packs or {}}
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


def _kernel_manager() -> dict:
    """papermill's keyword for a kernel whose sockets are files in a folder of its own (ZeroMQ ``ipc``): a kernel
    on TCP picks free ports, then binds them, and a kernel started meanwhile in another process (the other chapter
    lane, a test beside a book) may take one first, so the kernel dies and the chapter waits a minute for it.
    Windows has no ``ipc`` transport and keeps TCP."""
    if os.name == "nt":
        return {}
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    class FileSocketKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            self._socket_dir = tempfile.mkdtemp(prefix="metricbias-kernel-")
            super().__init__(transport="ipc", ip=os.path.join(self._socket_dir, "kernel"), **kwargs)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart)
            if not restart:
                shutil.rmtree(self._socket_dir, ignore_errors=True)

        cleanup_resources = _async_cleanup_resources

    return {"kernel_manager_class": FileSocketKernelManager}


def parse_parameters(items) -> dict:
    """``["seed=1", "attributes=gender,race"]`` -> ``{"seed": 1, "attributes": "gender,race"}``: a value is read
    as a Python literal (numbers, ``None``, lists, quoted strings) and otherwise kept as text."""
    out = {}
    for item in items or []:
        key, sep, text = str(item).partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ChapterError(f"parameter {item!r}: write it as name=value, e.g. -p seed=1")
        try:
            out[key] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            out[key] = text.strip()
    return out


#: tags a chapter cell may carry that already say how its code shows; others get ``hide-input``
_SHOW_TAGS = {"hide-input", "remove-input", "remove-cell", "hide-cell", "hide-output", "remove-output"}


def _assignments(source: str):
    """``(name, first line, last line, trailing comment)`` of each top-level ``name = value`` of a parameters cell
    (line numbers 1-based)."""
    lines = source.splitlines()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            yield node.targets[0].id, node.lineno, node.end_lineno, lines[node.end_lineno - 1][node.end_col_offset:].strip()


def _bake(source: str, values: dict) -> str:
    """The parameters cell ``source`` with each assignment of a name in ``values`` set to that value (its
    trailing comment kept); names it does not assign are appended."""
    lines = source.splitlines()
    done = set()
    for name, first, last, comment in reversed(list(_assignments(source))):  # bottom-up: line numbers stay valid
        if name in values and name not in done:
            lines[first - 1:last] = [f"{name} = {values[name]!r}" + (f"  {comment}" if comment else "")]
            done.add(name)
    lines += [f"{name} = {value!r}" for name, value in values.items() if name not in done]
    return "\n".join(lines)


def prepare(chapter: Chapter, profile: str, overrides: dict | None = None):
    """The chapter's notebook as it will run: the profile's parameters with ``overrides`` merged over them,
    baked into its ``parameters`` cell (removed from the page), a cell after it that starts the chapter's record for the
    Reproducibility appendix and shows the one-line link to it, and every other
    code cell folded. Returns ``(notebook, values)``; an override the chapter does not declare is an error."""
    import jupytext
    import nbformat

    nb = jupytext.read(chapter.source)
    # jupytext leaves kernelspec-less notebooks; papermill needs one
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    where = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if not where:
        raise ChapterError(f"chapter {chapter.stem} ({chapter.source}) has no cell tagged `parameters`")
    cell = nb.cells[where[0]]
    declared = declared_parameters(cell.source)
    unknown = sorted(set(overrides or {}) - set(declared))
    if unknown:
        raise ChapterError(f"chapter {chapter.stem} has no parameter {', '.join(unknown)}; "
                           f"it takes: {', '.join(declared)}")
    from_profile = {k: v for k, v in chapter_profiles.parameters(profile, chapter.stem).items() if k in declared}
    values = {**from_profile, **(overrides or {})}
    cell.source = _bake(cell.source, values)
    cell.metadata["tags"] = ["parameters", "remove-cell"]
    for other in nb.cells:
        tags = other.metadata.get("tags", [])
        if other.cell_type == "code" and other is not cell and not _SHOW_TAGS & set(tags):
            other.metadata["tags"] = [*tags, "hide-input"]
    number = chapter.stem.split("_")[0]
    command = " ".join([f"metricbias run --only {number} --profile {profile}",
                        *(f"-p {k}={shlex.quote(v if isinstance(v, str) else repr(v))}"
                          for k, v in (overrides or {}).items())])
    box = nbformat.v4.new_code_cell(
        "from metricbias.book import records as _records\n"
        f"_records.start({chapter.stem!r}, {profile!r}, {{{', '.join(f'{k!r}: {k}' for k in declared)}}}, "
        f"{declared!r}, {command!r})",
        metadata={"tags": ["remove-input"]})
    nb.cells.insert(where[0] + 1, box)
    return nb, values


def chapter_parameters(profile: str, stem: str) -> dict:
    """The values chapter ``stem`` runs with under ``profile``: its parameters cell's defaults, the profile's over
    them (what :func:`prepare` bakes in)."""
    import jupytext

    chapter = select(chapters(), stem)[0]
    nb = jupytext.read(chapter.source)
    cell = next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)
    if cell is None:
        raise ChapterError(f"chapter {chapter.stem} ({chapter.source}) has no cell tagged `parameters`")
    defaults = {node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse(cell.source).body
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)}
    profile_values = chapter_profiles.parameters(profile, chapter.stem)
    return {**defaults, **{k: v for k, v in profile_values.items() if k in defaults}}


def declared_parameters(source: str) -> dict:
    """``{name: help}`` of a parameters cell (help: the assignment's trailing comment)."""
    return {name: comment.lstrip("#").strip() for name, _, _, comment in _assignments(source)}


def execute_chapter(chapter: Chapter, profile: str, log=print, progress: bool = True,
                    overrides: dict | None = None, out_dir: Path | None = None, prepared=None) -> Path:
    """Execute one chapter into ``out_dir`` (default ``book/chapters``); with ``progress``, show its cells, the
    kernel's stderr and the time on stderr. ``prepared``: what :func:`prepare` already returned for it."""
    import jupytext
    import papermill as pm

    nb, params = prepared or prepare(chapter, profile, overrides)
    output = Path(out_dir) / chapter.output.name if out_dir else chapter.output
    work = cache_dir() / "run"
    work.mkdir(parents=True, exist_ok=True)
    src_ipynb = work / f"{chapter.stem}.input.ipynb"
    jupytext.write(nb, src_ipynb)
    failed = work / f"{chapter.stem}.failed.ipynb"
    previous = load_timings().get(profile, {}).get(chapter.stem, {}).get("seconds")
    shown = _Progress(chapter.stem, len(nb.cells), previous, work / f"{chapter.stem}.progress") if progress else None
    job_log = work / f"{chapter.stem}.jobs.jsonl"
    job_log.unlink(missing_ok=True)
    saved_env = {k: os.environ.get(k) for k in (bars.FILE_ENV, bars.COLUMNS_ENV, LOG_ENV)}
    os.environ[LOG_ENV] = str(job_log)  # the kernel logs its scoring jobs: the chapter's profile per metric
    if shown:  # the kernel inherits these: the library's bars go to the file shown copies to the terminal
        os.environ[bars.FILE_ENV] = str(shown.bars.name)
        os.environ[bars.COLUMNS_ENV] = str(max(40, min(120, shutil.get_terminal_size((100, 24)).columns)))
    start = time.perf_counter()
    try:
        with atomic_path(output, suffix=".ipynb") as tmp:
            try:
                pm.execute_notebook(  # no parameters: they are baked into the chapter's own cell
                    str(src_ipynb), str(tmp), kernel_name="python3",
                    cwd=str(chapter.source.parent), progress_bar=False, log_output=False,
                    engine_name=_register_engine(), progress=shown, stderr_file=shown, **_kernel_manager(),
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
    from .score_sources import chapter_numbers

    # how many of the chapter's scores came from score packs, how many were checked, the largest difference
    _save_timing(profile, chapter.stem, seconds, shown.cells if shown else [], job_profile(job_log),
                 chapter_numbers(job_log))
    log(f"  {chapter.stem}: executed with profile {profile} {params} in {seconds:.1f} s -> {output}")
    return output


def run(profile: str = "offline", only=None, log=print, progress: bool = True, parameters: dict | None = None,
        out_dir: Path | None = None, force: bool = False, jobs: int = 1) -> list[Path]:
    """Execute the chapters (all, or those named in ``only``) in ``_toc.yml`` order, with ``parameters`` merged
    over the profile's, into ``out_dir`` (default ``book/chapters``). A chapter whose executed notebook is there
    already with the same inputs (:mod:`metricbias.book.chapter_inputs`) is kept as it is, unless ``force``. With
    ``jobs`` > 1, that many chapters run at once (:mod:`metricbias.book.chapter_lanes`)."""
    from . import chapter_inputs, chapter_lanes

    chapter_profiles.parameters(profile)  # validates the name before any work
    if jobs < 1:
        raise ValueError(f"--jobs {jobs}: run at least one chapter at a time")
    selected = select(chapters(), only)
    prepared = [prepare(c, profile, parameters) for c in selected]  # an unknown parameter fails before any work
    if out_dir is not None:
        from ..paths import check_writable

        check_writable(Path(out_dir), folder=True)  # before any work; atomic_path creates the folder
    shared = chapter_inputs.shared()
    outputs = [Path(out_dir) / c.output.name if out_dir else c.output for c in selected]
    todo = []
    for (nb, _), output in zip(prepared, outputs):
        inputs = chapter_inputs.stamp(nb, shared)
        nb.metadata[chapter_inputs.METADATA_KEY] = {"inputs": inputs}
        todo.append(force or chapter_inputs.recorded(output) != inputs)
    last = [i for i, c in enumerate(selected) if c.stem == records.APPENDIX_STEM]
    if last and any(again for i, again in enumerate(todo) if i != last[0]):
        todo[last[0]] = True  # it shows the other chapters' records: it runs again, after them
    kept = [c.stem for c, again in zip(selected, todo) if not again]
    if kept:
        log(f"kept {len(kept)} chapter(s) whose notebook, parameters, library, models, data and packages are "
            f"unchanged since they were executed: {', '.join(kept)} (--force runs them again)")
    if any(todo) and not os.environ.get(chapter_lanes.PACKS_READY_ENV):
        from . import packs

        # verified score packs into the score cache (or, with METRICBIAS_RECOMPUTE, out of it), checked by as many
        # processes as chapters run at once
        packs.prepare(log=log, workers=jobs)
    log(f"running {sum(todo)} chapter(s) with profile {profile}")
    lanes = [c for i, (c, again) in enumerate(zip(selected, todo)) if again and i not in last]
    if jobs > 1 and len(lanes) > 1:
        failed = chapter_lanes.execute(lanes, profile, parameters, out_dir, jobs, log=log,
                                       timings=load_timings().get(profile, {}))
        if failed:
            raise ChapterError(failed)
    for chapter, ready, again in zip(selected, prepared, todo):
        if again and not (jobs > 1 and len(lanes) > 1 and chapter in lanes):
            execute_chapter(chapter, profile, log=log, progress=progress, out_dir=out_dir, prepared=ready)
    return outputs


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
