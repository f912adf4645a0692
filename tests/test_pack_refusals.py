"""Score packs refuse what they cannot check: `metricbias pack verify|import` and the import path end with one
line that names the folder or file, a non-zero status, and no traceback; no score checked is never a success."""

from __future__ import annotations

import json

import pytest
from test_packs import DATASET, LengthRatio, _pairs

from metricbias.book import packs
from metricbias.cache import ScoreCache
from metricbias.cli import main
from metricbias.datasets import registry as datasets
from metricbias.metrics import registry as metrics

COMMANDS = ("verify", "import")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder holding one verified pack (its .npz and provenance .json) of a registered test metric."""
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))
    datasets.register(DATASET, description="test pairs", attributes=lambda: ["gender", "race"], replace=True)(_pairs)
    metrics.register(LengthRatio, replace=True)
    out = tmp_path / "packs"
    packs.build([packs.Entry(packs.MetricConfig(LengthRatio.name, {}), f"pairs:{DATASET}")], out,
                log=lambda *_: None, progress=False)
    yield out
    datasets.DATASETS.pop(DATASET, None)
    metrics.unregister(LengthRatio.name)


def _refused(capsys, command: str, where) -> str:
    """Run `metricbias pack COMMAND --packs WHERE`: it fails with one line on stderr and nothing else; the line."""
    assert main(["pack", command, "--packs", str(where), "--fraction", "1"]) == 1
    out, err = capsys.readouterr()
    assert "scores checked" not in out and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"metricbias pack {command}: error: "), err
    return lines[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_folder_is_an_error_naming_it(tmp_path, capsys, command):
    where = tmp_path / "no-such-folder"
    assert str(where) in _refused(capsys, command, where)
    with pytest.raises(packs.PackError, match="no-such-folder"):
        packs.import_packs(where, ScoreCache(tmp_path / "c.sqlite"))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_without_a_pack_is_an_error_naming_it(tmp_path, capsys, command):
    where = tmp_path / "empty"
    where.mkdir()
    (where / "README.md").write_text("no packs here")
    line = _refused(capsys, command, where)
    assert str(where) in line and "no score pack" in line


@pytest.mark.parametrize("command", COMMANDS)
def test_a_provenance_without_its_pack_is_an_error_naming_it(folder, capsys, command):
    pack = next(folder.glob("*.npz"))
    pack.unlink()  # a folder of provenance files only
    line = _refused(capsys, command, folder)
    assert str(pack.with_suffix(".json")) in line and pack.name in line


@pytest.mark.parametrize("command", COMMANDS)
def test_a_pack_without_its_provenance_is_an_error_naming_it(folder, capsys, command):
    pack = next(folder.glob("*.npz"))
    pack.with_suffix(".json").unlink()
    line = _refused(capsys, command, folder)
    assert str(pack) in line and "provenance" in line


@pytest.mark.parametrize("command", COMMANDS)
def test_a_provenance_whose_meta_differs_from_its_pack_is_an_error_naming_both(folder, capsys, command):
    side = next(folder.glob("*.json"))
    record = json.loads(side.read_text())
    record["meta"]["text_set"] = "pairs:published"  # the sha256 still matches the pack: only the meta disagrees
    side.write_text(json.dumps(record))
    line = _refused(capsys, command, folder)
    assert str(side.with_suffix(".npz")) in line and str(side) in line and "text_set" in line


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unparsable_provenance_is_an_error_naming_it(folder, capsys, command):
    side = next(folder.glob("*.json"))
    side.write_text(side.read_text()[:40])
    assert str(side) in _refused(capsys, command, folder)


@pytest.mark.parametrize("command", COMMANDS)
def test_no_score_checked_is_never_a_success(folder, capsys, command):
    class Revised(LengthRatio):  # a new revision: the pack's fingerprint is stale, so nothing is checked
        name = LengthRatio.name
        revision = LengthRatio.revision + 1

    metrics.register(Revised, replace=True)
    line = _refused(capsys, command, folder)
    assert "no score checked" in line and str(folder) in line and "1 stale" in line
    with pytest.raises(packs.PackError, match="no score was checked"):
        packs.summary_line([])


def test_packs_imported_before_are_no_failure_and_no_zero_count(folder, capsys):
    assert main(["pack", "import", "--packs", str(folder)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith(" scores checked, max |diff| 0")
    assert main(["pack", "import", "--packs", str(folder)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("no pack to import: the 1 in ") and "0 scores" not in last


def test_a_run_without_shipped_packs_computes_live_but_a_named_folder_must_hold_them(tmp_path, monkeypatch):
    """`metricbias run` on a checkout without models/packs scores everything live (a copy of the sources, say);
    a folder named through METRICBIAS_PACKS is checked like --packs."""
    monkeypatch.setenv("METRICBIAS_ROOT", str(tmp_path))
    monkeypatch.delenv(packs.PACKS_ENV, raising=False)
    said = []
    assert packs.prepare(cache=ScoreCache(tmp_path / "c.sqlite"), log=said.append) == []
    assert "computed live" in said[0]
    monkeypatch.setenv(packs.PACKS_ENV, str(tmp_path / "typo"))
    with pytest.raises(packs.PackError, match="typo"):
        packs.prepare(cache=ScoreCache(tmp_path / "c.sqlite"), log=said.append)
