"""Bad input, tried as a new user would: every case ends in one line ``metricbias CMD: error: ...`` naming what
and where, exit status 2 (usage) or 1 (the run failed) or 130 (Ctrl-C), never a traceback, never partial output.

The CLI runs in-process through ``cli.main`` (fast); only the Ctrl-C case runs a subprocess and sends SIGINT.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from metricbias import cli
from tests.conftest import real_raw_location, write_registry

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("METRICBIAS_CACHE", str(cache))
    return cache


@pytest.fixture(scope="module")
def real_data():
    real_raw_location()  # skips without raw data


def run(capsys, *argv) -> tuple[int, str]:
    """Exit status and stderr of ``metricbias argv``."""
    status = cli.main([str(a) for a in argv])
    return status, capsys.readouterr().err


def one_error(err: str, command: str) -> str:
    """The single error line (warnings and progress bars aside); no traceback."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ": error: " in ln]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"metricbias {command}: error: "), lines[0]
    return lines[0]


def left_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# --- unknown names ------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, command, named", [
    (["weat", "--test", "C1", "--level", "word", "--metric", "blue"], "weat", "unknown metric 'blue'"),
    (["score", "--attribute", "gender", "--metric", "bertscore", "--backbone", "nope"], "score",
     "nope"),  # named, whatever the wording
    (["score", "--dataset", "nope", "--attribute", "gender", "--metric", "bleu"], "score", "unknown dataset 'nope'"),
    (["metaeval", "--dataset", "flickr30k", "--metrics", "bleu"], "metaeval",
     "unknown meta-evaluation dataset 'flickr30k'"),
    (["score", "--attribute", "nope", "--metric", "bleu"], "score", "unknown attribute(s) ['nope']"),
    (["weat", "--test", "C99", "--metric", "bleu"], "weat", "unknown association test(s) ['C99']"),
    (["weat", "--test", "C1", "--level", "phrase", "--metric", "bleu"], "weat", "unknown level(s) ['phrase']"),
    (["run", "--profile", "nope"], "run", "unknown profile 'nope'"),
    (["run", "--only", "01", "--jobs", "0"], "run", "--jobs 0: run at least one chapter at a time"),
    (["weat", "--test", "C1", "--metric", "bleu", "--oov", "nan"], "weat", "argument --oov: invalid choice: 'nan'"),
])
def test_unknown_names_are_usage_errors(argv, command, named, tmp_path, own_cache, capsys, real_data):
    out = tmp_path / "out.csv"
    status, err = run(capsys, *argv, *(["--out", out] if command != "run" else []))
    assert status == 2
    assert named in one_error(err, command)
    assert left_in(tmp_path) == ["cache"] or left_in(tmp_path) == []


# --- option values and --out, checked before any computing ---------------------------------------------
@pytest.fixture
def no_computing(monkeypatch):
    """Fail the test if an association test or a meta-evaluation starts."""
    from metricbias.bias import association
    from metricbias.metaeval import analysis

    def computed(*args, **kwargs):
        raise AssertionError("computing started before the bad input was reported")

    monkeypatch.setattr(association, "run", computed)
    monkeypatch.setattr(analysis, "run", computed)


def unwritable_folder(tmp_path) -> Path:
    """A folder this process cannot create files in (root ignores permission bits: use /sys then)."""
    if os.geteuid() != 0:
        folder = tmp_path / "readonly"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    if Path("/sys").is_dir() and not os.access("/sys", os.W_OK | os.X_OK) or _cannot_create_in(Path("/sys")):
        return Path("/sys")
    pytest.skip("no unwritable folder for root here")


def _cannot_create_in(folder: Path) -> bool:
    try:
        (folder / ".metricbias-test").touch()
    except OSError:
        return True
    (folder / ".metricbias-test").unlink()
    return False


def test_out_in_a_read_only_folder_fails_before_computing(tmp_path, capsys, no_computing, real_data):
    out = unwritable_folder(tmp_path) / "weat.csv"
    status, err = run(capsys, "weat", "--test", "C6-T", "--level", "word", "--metric", "embedding_average",
                      "--out", out)
    line = one_error(err, "weat")
    assert status == 2 and f"--out {out}: cannot write in {out.parent}" in line and "choose a folder" in line


def test_out_naming_a_folder_fails_before_computing(tmp_path, capsys, no_computing, real_data):
    status, err = run(capsys, "metaeval", "--dataset", "wmt19-kk-en", "--metrics", "bleu", "--out", tmp_path)
    assert status == 2 and f"--out {tmp_path} is a folder; give a file name" in one_error(err, "metaeval")
    (tmp_path / "file").write_text("x")
    status, err = run(capsys, "build-datasets", "--attributes", "gender", "--out", tmp_path / "file")
    assert status == 2 and "is a file; give a folder" in one_error(err, "build-datasets")


@pytest.mark.parametrize("argv, named", [
    (["metaeval", "--dataset", "wmt19-kk-en", "--metrics", "bleu", "--sample", "-3"],
     "argument --sample: must be 0 (all) or a positive number, not -3"),
    (["weat", "--test", "C1", "--metric", "bleu", "--sample-size", "-1"], "argument --sample-size: must be 0"),
    (["weat", "--test", "C1", "--metric", "bleu", "--n-permutations", "1"],
     "argument --n-permutations: needs at least 2 partitions, not 1"),
    (["weat", "--test", "C1", "--metric", "bleu", "--n-permutations", "many"],
     "argument --n-permutations: 'many' is not a whole number"),
    (["weat", "--metric", "bleu"], "the following arguments are required: --test"),
])
def test_bad_option_values_name_the_option(argv, named, tmp_path, capsys, no_computing):
    out = tmp_path / "out.csv"
    status, err = run(capsys, *argv, "--out", out)
    assert status == 2 and named in one_error(err, argv[0]) and not out.exists()
    assert "usage:" not in err  # one line, with a pointer to --help instead


@pytest.mark.parametrize("argv, option", [
    (["score", "--dataset", "built", "--attribute", "gender", "--metric", "bleu", "--built-dir", "{missing}"],
     "--built-dir"),
    (["bias", "--dataset", "built", "--scores", "live", "--metrics", "bleu", "--built-dir", "{missing}"], "--built-dir"),
    (["audit", "--dataset", "built", "--metric", "bleu", "--built-dir", "{missing}"], "--built-dir"),
    (["metaeval", "--dataset", "{missing}.jsonl", "--metrics", "bleu"], "--dataset"),
    (["score", "--attribute", "gender", "--metric", "bertscore", "--backbone", "{missing}"], "--backbone"),
    (["adapters", "evaluate", "--adapter", "{missing}"], "--adapter"),
    (["adapters", "ship", "--run", "{missing}"], "--run"),
])
def test_a_missing_input_path_fails_naming_the_option_before_any_work(argv, option, tmp_path, own_cache, capsys):
    missing = tmp_path / "nowhere"
    out = tmp_path / "out.csv"
    argv = [a.replace("{missing}", str(missing)) for a in argv] + (["--out", out] if argv[1] != "ship" else [])
    status, err = run(capsys, *argv)
    command = " ".join(argv[:2]) if argv[0] == "adapters" else argv[0]
    named = f"{missing}.jsonl" if argv[0] == "metaeval" else missing
    assert status == 2 and f"argument {option}: {named} does not exist; check the path" in one_error(err, command)
    assert left_in(tmp_path) == []  # no folder made, no output


def test_a_built_dir_that_is_a_file_fails_in_the_cli_and_in_the_library(tmp_path, own_cache, capsys):
    import metricbias as mb

    a_file = tmp_path / "pairs.tsv"
    a_file.write_text("x")
    status, err = run(capsys, "audit", "--dataset", "built", "--metric", "bleu", "--built-dir", a_file,
                      "--out", tmp_path / "out.csv")
    assert status == 2 and f"argument --built-dir: {a_file} is a file; give a folder" in one_error(err, "audit")
    with pytest.raises(ValueError, match=f"built_dir {tmp_path / 'none'} does not exist"):
        mb.audit("bleu", dataset="built", built_dir=tmp_path / "none")
    assert left_in(tmp_path) == ["pairs.tsv"]


# --- malformed input files --------------------------------------------------------------------------
JUDGED = {"item_id": "d1", "system_id": "A", "hypothesis": "A man rides.", "references": ["A man rides a horse."],
          "human": {"overall": 3}}


@pytest.mark.parametrize("content, named", [
    (json.dumps(JUDGED) + "\n{oops\n", "bad.jsonl, line 2: not valid JSON"),
    ("", "bad.jsonl: the file is empty"),
    ("\n\n", "bad.jsonl: the file is empty"),
    (json.dumps(JUDGED) + "\n" + json.dumps(JUDGED) + "\n", "bad.jsonl, line 2: (item_id, system_id) = (d1, A) "
                                                           "occurs twice"),
    (json.dumps({"item_id": 1, "reference": "r", "better": "b", "worse": "w"}) + "\n"
     + json.dumps({"item_id": 1, "reference": "r", "better": "b", "worse": "w"}) + "\n",
     "bad.jsonl, line 2: the pair (item_id='1', better='b', worse='w') occurs twice"),
    (json.dumps({**JUDGED, "human": {"overall": "good"}}) + "\n",
     "bad.jsonl, line 1: human score for 'overall' must be a finite number"),
])
def test_malformed_empty_and_duplicated_jsonl(content, named, tmp_path, own_cache, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    out = tmp_path / "out.csv"
    status, err = run(capsys, "metaeval", "--dataset", path, "--metrics", "bleu", "--out", out)
    assert status == 2 and named in one_error(err, "metaeval") and not out.exists()


def test_utf16_jsonl_names_the_file_and_line(tmp_path, own_cache, capsys):
    path = tmp_path / "utf16.jsonl"
    path.write_text(json.dumps(JUDGED) + "\n", encoding="utf-16")
    status, err = run(capsys, "metaeval", "--dataset", path, "--metrics", "bleu", "--out", tmp_path / "out.csv")
    line = one_error(err, "metaeval")
    assert status == 2 and f"{path}, line 1: the file is UTF-16 text" in line and "save it as UTF-8" in line


def test_a_non_utf8_byte_names_the_line(tmp_path, own_cache, capsys):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes((json.dumps(JUDGED) + "\n").encode() + b'{"item_id": "caf\xe9"}\n')
    status, err = run(capsys, "metaeval", "--dataset", path, "--metrics", "bleu", "--out", tmp_path / "out.csv")
    assert status == 2 and f"{path}, line 2: not UTF-8 text (byte 0xe9" in one_error(err, "metaeval")


# --- sources: checksum mismatch, malicious pickle ------------------------------------------------------
def test_checksum_mismatch_is_a_runtime_error_naming_the_file(tmp_project, capsys):
    write_registry(tmp_project, {"toy/words.txt": b"the registered content\n"})
    (tmp_project / "data" / "raw" / "toy").mkdir(parents=True)
    (tmp_project / "data" / "raw" / "toy" / "words.txt").write_bytes(b"something else\n")
    status, err = run(capsys, "fetch")
    line = one_error(err, "fetch")
    assert status == 1 and "checksum mismatch for toy/words.txt" in line and "run `metricbias fetch`" in line


class _Payload:
    """Unpickling this runs ``os.system`` (if anyone lets it)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_malicious_pickle_is_refused_and_its_payload_never_runs(tmp_path, own_cache, capsys):
    marker = tmp_path / "PAYLOAD-RAN"
    path = tmp_path / "de-en.pkl"
    path.write_bytes(pickle.dumps({0: {"ref": "r", "better": {"sys": "b", "sys_name": _Payload(marker)},
                                       "worse": {"sys": "w", "sys_name": "B"}}}, protocol=2))
    out = tmp_path / "out.csv"
    status, err = run(capsys, "metaeval", "--dataset", path, "--metrics", "bleu", "--out", out)
    line = one_error(err, "metaeval")
    assert status == 2 and f"{path}: refused to unpickle posix.system" in line
    assert not marker.exists() and not out.exists()


def test_a_pickle_of_another_shape_names_the_entry(tmp_path, own_cache, capsys):
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps({3: {"ref": "r", "better": {"sys": "b"}, "worse": {"sys": "w"}}}))
    status, err = run(capsys, "metaeval", "--dataset", path, "--metrics", "bleu", "--out", tmp_path / "o.csv")
    assert status == 2 and f"{path}, entry 3: missing 'sys_name'" in one_error(err, "metaeval")


# --- a corrupt score cache ------------------------------------------------------------------------------
WEAT = ["weat", "--test", "C6-T", "--level", "word", "--metric", "embedding_average"]


@pytest.mark.parametrize("damage", ["not a database", "damaged pages"])
def test_a_corrupt_cache_gets_one_line_naming_it(damage, tmp_path, own_cache, capsys, real_data, recwarn):
    assert run(capsys, *WEAT, "--out", tmp_path / "first.csv")[0] == 0
    files = [p for p in own_cache.rglob("*") if p.is_file() and p.suffix in (".sqlite", ".db")]
    assert files, left_in(own_cache)
    for path in files:
        blob = path.read_bytes()
        path.write_bytes(b"this is not a database " * 200 if damage == "not a database"
                         else blob[:100] + b"\x13" * (len(blob) - 100))
        for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
            extra.unlink(missing_ok=True)
    status, err = run(capsys, *WEAT, "--out", tmp_path / "again.csv")
    assert "Traceback" not in err
    if status == 0:  # the cache may move a damaged file aside and rebuild it, saying so
        # (under pytest the warning is recorded rather than printed)
        said = err + "".join(str(w.message) for w in recwarn)
        assert str(own_cache) in said and pd.read_csv(tmp_path / "again.csv").equals(pd.read_csv(tmp_path / "first.csv"))
    else:
        line = one_error(err, "weat")
        assert status == 1 and str(own_cache) in line and not (tmp_path / "again.csv").exists()


# --- interrupted runs, reruns and file modes -------------------------------------------------------------
def test_an_interrupt_while_writing_leaves_nothing(tmp_path, own_cache, capsys, monkeypatch, real_data):
    real_to_csv = pd.DataFrame.to_csv

    def half_then_interrupt(self, path, *args, **kwargs):
        Path(path).write_text("test,level\nC6-T,")  # half a file
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_interrupt)
    status, err = run(capsys, *WEAT, "--out", tmp_path / "out" / "weat.csv")
    monkeypatch.setattr(pd.DataFrame, "to_csv", real_to_csv)
    assert status == 130 and "interrupted (Ctrl-C)" in one_error(err, "weat")
    assert left_in(tmp_path / "out") == []  # neither the output nor its temporary file


def test_an_interrupt_swallowed_by_a_finalizer_still_stops_the_run(tmp_path, capsys, monkeypatch):
    # Python cannot raise from __del__: a Ctrl-C that lands there is printed as "Exception ignored" and lost.
    # (During chrF scoring nltk's regex module finalizes Group objects constantly, so a first Ctrl-C was often
    # lost there.) The CLI re-delivers it.
    class Finalizer:
        def __del__(self):
            raise KeyboardInterrupt

    def command(args):
        Finalizer()  # collected at once: its KeyboardInterrupt is "ignored"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the run would go on
            pass
        return 0

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(cli, "_cmd_metrics", command)
        started = time.monotonic()
        status, err = run(capsys, "metrics")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert status == 130 and time.monotonic() - started < 4
    assert "interrupted (Ctrl-C)" in one_error(err, "metrics") and "Exception ignored" not in err


def test_a_handled_ctrl_c_in_exec_still_exits_130(tmp_path):
    # CPython 3.11 marks a KeyboardInterrupt raised inside exec() of a source string as unhandled even when it
    # is caught, and `python -m` then ends the process by SIGINT (-2) instead of with main's 130. scipy runs
    # exec("from ... import *") in a lazy import during scoring, so a Ctrl-C can land there.
    (tmp_path / "ki_in_exec.py").write_text(
        "import sys\n"
        "from metricbias import cli\n"
        "def command(args):\n"
        "    exec('raise KeyboardInterrupt')\n"
        "cli._cmd_metrics = command\n"
        "sys.exit(cli.main(['metrics']))\n")
    done = subprocess.run([sys.executable, "-m", "ki_in_exec"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])},
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), timeout=120)
    assert done.returncode == 130, done.stderr
    assert "interrupted (Ctrl-C)" in one_error(done.stderr, "metrics")


def test_ctrl_c_prints_one_line_exits_130_and_leaves_no_output(tmp_path, real_data):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    err_path = tmp_path / "stderr.txt"
    env = {**os.environ, "METRICBIAS_CACHE": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    with open(err_path, "wb") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "metricbias.cli", "weat", "--test", "all", "--level", "sent", "--metric", "chrf",
             "--out", str(out_dir / "weat.csv")],
            stdout=subprocess.DEVNULL, stderr=err_file, env=env, cwd=REPO,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # even if our SIGINT is ignored
        deadline = time.monotonic() + 90
        while "association pairs" not in err_path.read_text(errors="replace"):  # scoring has started
            assert proc.poll() is None and time.monotonic() < deadline, err_path.read_text()
            time.sleep(0.2)
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        try:
            status = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the first Ctrl-C was swallowed: the run went on")
    err = err_path.read_text(errors="replace").replace("\r", "\n")
    assert status == 130, err[-3000:]
    assert "interrupted (Ctrl-C)" in one_error(err, "weat")
    assert left_in(out_dir) == []


def test_reruns_are_byte_identical_and_outputs_follow_the_umask(tmp_path, own_cache, capsys, real_data):
    previous = os.umask(0o022)
    try:
        first, second = tmp_path / "first.csv", tmp_path / "second.csv"
        argv = ["weat", "--test", "C6-T,C7-N,ABW-T", "--level", "word", "--metric", "embedding_average"]
        assert run(capsys, *argv, "--out", first)[0] == 0  # scores computed
        assert run(capsys, *argv, "--out", second)[0] == 0  # scores from the cache
        assert first.read_bytes() == second.read_bytes()
        assert first.stat().st_mode & 0o777 == 0o644
        os.umask(0o027)
        assert run(capsys, *argv, "--out", first)[0] == 0  # replacing an output takes the current umask
        assert first.stat().st_mode & 0o777 == 0o640 and first.read_bytes() == second.read_bytes()
    finally:
        os.umask(previous)


def test_fetched_files_follow_the_umask(tmp_project, tmp_path, monkeypatch, capsys):
    blob = b"registered words\n"
    write_registry(tmp_project, {"toy/words.txt": blob})
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy" / "words.txt").write_bytes(blob)
    (mirror / "toy" / "words.txt").chmod(0o600)
    monkeypatch.setenv("METRICBIAS_MIRROR", str(mirror))
    previous = os.umask(0o022)
    try:
        assert run(capsys, "fetch")[0] == 0
    finally:
        os.umask(previous)
    fetched = tmp_project / "data" / "raw" / "toy" / "words.txt"
    assert fetched.read_bytes() == blob and fetched.stat().st_mode & 0o777 == 0o644
