"""Chapters executed side by side: ``metricbias run --jobs N`` (``make book JOBS=N``).

Much of a chapter's time is single-threaded Python (n-gram metrics, tests, tables), so on a machine with N
cores N chapters at once finish sooner than one after the other. Each chapter runs as its own
``metricbias run --only STEM --force`` process (its kernel, environment and progress file are its own), with
the cores shared out (``OMP_NUM_THREADS``: two chapters that each ran PyTorch on every core would spend much of
their time waiting on each other's threads). The longest chapters start first (:func:`start_order`), then the
others in ``_toc.yml`` order, each as soon as a chapter finishes; a chapter that reads what another scored finds
it in the score cache (a multi-process SQLite file) when that one ran before it. The children's lines reach
the terminal as they come, each a whole line (a progress bar shows its last state); the first chapter that
fails stops the others (Ctrl-C, so that none leaves a partial notebook), and the run ends with its error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path

#: set for the children: the parent imported and verified the score packs already
PACKS_READY_ENV = "METRICBIAS_PACKS_READY"
ERROR_PREFIX = "metricbias run: error:"


def command(stem: str, profile: str, overrides: dict | None, out_dir: Path | None) -> list[str]:
    """The ``metricbias run`` command line that executes chapter ``stem`` alone."""
    cmd = [sys.executable, "-m", "metricbias.cli", "run", "--only", stem, "--profile", profile, "--force"]
    for key, value in (overrides or {}).items():
        cmd += ["-p", f"{key}={value!r}"]
    if out_dir is not None:
        cmd += ["--out", str(out_dir)]
    return cmd


def start_order(chapters: list, timings: dict) -> list:
    """The order in which ``chapters`` start: longest first by the times the last run of the profile recorded
    (``timings``: ``{stem: {"seconds": ...}}``, see :func:`metricbias.book.runner.load_timings`); without a record for
    every one of them, ``chapter_profiles.START_FIRST`` first (``START_FIRST_LIVE`` when the packs are ignored) and the
    others in ``_toc.yml`` order."""
    from . import chapter_profiles
    from .score_sources import recomputing

    recorded = {stem: row.get("seconds") for stem, row in timings.items()}
    if all(isinstance(recorded.get(c.stem), (int, float)) for c in chapters):
        return sorted(chapters, key=lambda c: -recorded[c.stem])  # sorted() is stable: ties keep _toc.yml order
    first = [c for stem in (chapter_profiles.START_FIRST_LIVE if recomputing() else chapter_profiles.START_FIRST)
             for c in chapters if c.stem == stem]
    return first + [c for c in chapters if c not in first]


def thread_env(jobs: int) -> dict:
    """The children's share of the cores, unless the caller set ``OMP_NUM_THREADS`` already."""
    if os.environ.get("OMP_NUM_THREADS"):
        return {}
    share = str(max(1, (os.cpu_count() or 1) // jobs))
    return {"OMP_NUM_THREADS": share, "MKL_NUM_THREADS": share}


class _Child:
    def __init__(self, stem: str, cmd: list[str], stream, lock: threading.Lock, env: dict):
        self.stem, self.stream, self.lock = stem, stream, lock
        self.error: str | None = None
        env = {**os.environ, **env, PACKS_READY_ENV: "1"}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        self.reader = threading.Thread(target=self._relay, daemon=True)
        self.reader.start()

    def _relay(self) -> None:
        """Copy the child's output line by line; of a line rewritten with carriage returns, its last state."""
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n").split("\r")[-1].rstrip()
            if not line:
                continue
            if line.startswith(ERROR_PREFIX):
                self.error = line[len(ERROR_PREFIX):].strip()
            with self.lock:
                self.stream.write(line + "\n")
                self.stream.flush()

    def finish(self) -> int:
        code = self.proc.wait()
        self.reader.join()
        self.proc.stdout.close()  # read to the end: an open pipe would be reported as a ResourceWarning
        return code

    def interrupt(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # the child removes its unfinished notebook, as on Ctrl-C


def execute(chapters: list, profile: str, overrides: dict | None, out_dir: Path | None, jobs: int, log=print,
            stream=None, timings: dict | None = None) -> str | None:
    """Execute ``chapters`` (:class:`metricbias.book.runner.Chapter`) with at most ``jobs`` at once, in
    :func:`start_order` (``timings``: the profile's recorded chapter times); return the first failure's error
    message (the others are stopped), or ``None``."""
    stream = stream or sys.stderr
    lock = threading.Lock()
    env = thread_env(jobs)
    waiting, running = deque(start_order(chapters, timings or {})), []
    finished = threading.Condition()
    done: list[_Child] = []

    def start(chapter) -> None:
        child = _Child(chapter.stem, command(chapter.stem, profile, overrides, out_dir), stream, lock, env)
        running.append(child)

        def wait() -> None:
            child.finish()
            with finished:
                done.append(child)
                finished.notify()

        threading.Thread(target=wait, daemon=True).start()

    failure = None
    try:
        while waiting or running:
            while waiting and len(running) < jobs and failure is None:
                chapter = waiting.popleft()
                with lock:
                    log(f"  starting {chapter.stem} ({len(running) + 1} of at most {jobs} chapters at once)")
                start(chapter)
            if not running:
                break
            with finished:
                finished.wait_for(lambda: bool(done))
                child = done.pop(0)
            running.remove(child)
            if child.proc.returncode != 0 and failure is None:
                failure = child
                for other in running:
                    other.interrupt()
    except KeyboardInterrupt:
        for child in running:
            child.interrupt()
        for child in running:
            child.finish()
        raise
    if failure is None:
        return None
    message = failure.error or f"exited with status {failure.proc.returncode}"
    # a chapter's own errors name it; others (a kernel that died, a disk that filled up) do not
    return message if failure.stem in message else f"chapter {failure.stem}: {message}"


__all__ = ["PACKS_READY_ENV", "command", "execute", "start_order", "thread_env"]
