"""Execute the chapters: MyST notebooks -> papermill -> ``book/chapters/*.ipynb``.

Chapters are taken in ``_toc.yml`` order. Each ``book/chapters/<stem>`` entry of
the table of contents is built from ``notebooks/<stem>.md`` (jupytext), executed
by papermill with the profile's parameters, and written atomically; the first
failure stops the run with an error naming the chapter and the cell, and the
failed notebook is kept under the cache folder for inspection.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import profiles
from .paths import atomic_path, cache_dir, project_root

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


def execute_chapter(chapter: Chapter, profile: str, log=print) -> Path:
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
    start = time.perf_counter()
    with atomic_path(chapter.output, suffix=".ipynb") as tmp:
        try:
            pm.execute_notebook(
                str(src_ipynb), str(tmp), parameters=params, kernel_name="python3",
                cwd=str(chapter.source.parent), progress_bar=False, log_output=False,
            )
        except pm.PapermillExecutionError as exc:
            shutil.copyfile(tmp, failed)
            raise ChapterError(
                f"chapter {chapter.stem} ({chapter.source}) failed in cell {exc.cell_index} "
                f"(execution count {exc.exec_count}): {exc.ename}: {exc.evalue}\n"
                f"cell source:\n{exc.source}\nexecuted notebook kept at {failed}"
            ) from None
    log(f"  {chapter.stem}: executed with profile {profile} {params} in {time.perf_counter() - start:.1f} s "
        f"-> {chapter.output}")
    return chapter.output


def run(profile: str = "offline", only=None, log=print) -> list[Path]:
    """Execute the chapters (all, or those named in ``only``) in ``_toc.yml`` order."""
    profiles.parameters(profile)  # validates the name before any work
    selected = _select(chapters(), only)
    log(f"running {len(selected)} chapter(s) with profile {profile}")
    return [execute_chapter(c, profile, log=log) for c in selected]


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
