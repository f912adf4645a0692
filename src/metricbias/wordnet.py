"""WordNet 3.0 for METEOR, from Debian's packages, in a project-owned nltk data folder.

METEOR's synonym stage (``nltk.translate.meteor_score``) needs WordNet, and
there is no ``nltk.download`` here. Debian ships WordNet 3.0 as the packages
``wordnet-base`` (the database) and ``wordnet-sense-index`` (``index.sense``).
:func:`install` fetches both with ``apt-get download`` (no root needed),
unpacks them with ``dpkg -x`` and *copies* the database files into
``.cache/nltk_data/corpora/wordnet/`` (nltk refuses symlinks that lead out of
its data folders). nltk's reader also opens a ``lexnames`` file, which Debian
ships only as the table in the ``lexnames(5WN)`` man page: :func:`lexnames_from_man`
turns that table into the file (45 lines ``NN<TAB>name<TAB>category``).

``make wordnet`` (a prerequisite of ``make data``) runs ``python -m metricbias.wordnet``.
:func:`reader` opens the folder for the METEOR metric.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

PACKAGES = ("wordnet-base", "wordnet-sense-index")
#: the database files nltk's WordNetCorpusReader reads (plus lexnames, generated)
DATABASE_FILES = (
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb", "index.sense",
    "adj.exc", "adv.exc", "noun.exc", "verb.exc",
)
_MAN_PAGE = "usr/share/man/man5/lexnames.5WN.gz"
_DB_DIR = "usr/share/wordnet"
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}  # the lexnames(5WN) syntactic category codes


class WordNetError(RuntimeError):
    """WordNet is not set up, or could not be set up; the message says how to fix it."""


def nltk_data_dir() -> Path:
    """The project's nltk data folder (``METRICBIAS_NLTK_DATA`` overrides it).

    It belongs to the checkout, like ``.venv``: tests and chapters that move the
    project root elsewhere still find it.
    """
    env = os.environ.get("METRICBIAS_NLTK_DATA")
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parents[2] / ".cache" / "nltk_data"


def wordnet_dir(root: Path | None = None) -> Path:
    return (root or nltk_data_dir()) / "corpora" / "wordnet"


def is_installed(root: Path | None = None) -> bool:
    folder = wordnet_dir(root)
    return all((folder / name).is_file() for name in (*DATABASE_FILES, "lexnames", "VERSION"))


def installed_version(root: Path | None = None) -> str:
    """The Debian package versions the installed files came from (recorded in METEOR's signature)."""
    path = wordnet_dir(root) / "VERSION"
    if not path.is_file():
        raise WordNetError(_missing_message(root))
    return path.read_text().strip()


def signature_tag(root: Path | None = None) -> str:
    """A compact tag of the installed copy for metric signatures, e.g. ``3.0-debian-3.0-37``."""
    text = installed_version(root)
    versions = sorted({v.split(":", 1)[-1] for v in re.findall(r"wordnet-[a-z-]+ (\S+?)(?:;|$)", text)})
    return "3.0-debian-" + "+".join(versions)


def lexnames_from_man(man_text: str) -> str:
    """The ``lexnames`` file from the ``lexnames(5WN)`` man page source (its tbl table).

    Each table row ``NN<TAB>name<TAB>description`` becomes ``NN<TAB>name<TAB>category``,
    the category (1 noun, 2 verb, 3 adjective, 4 adverb) being the prefix of
    the name, as the man page's "Syntactic Category" section defines it.
    """
    rows = []
    for line in man_text.splitlines():
        m = re.match(r"^(\d\d)\t([a-z]+)\.([A-Za-z]+)\s*\t", line)
        if m:
            number, pos, name = m.groups()
            rows.append(f"{number}\t{pos}.{name}\t{_CATEGORY[pos]}")
    numbers = [int(r.split("\t")[0]) for r in rows]
    if numbers != list(range(45)):
        raise WordNetError(f"lexnames(5WN) man page: expected file numbers 00-44 in its table, found {numbers}")
    return "\n".join(rows) + "\n"


def _apt_download(workdir: Path) -> str:
    """Download and unpack the Debian packages into ``workdir``; returns their versions."""
    for tool in ("apt-get", "dpkg", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise WordNetError(f"cannot set up WordNet: `{tool}` is not on PATH (a Debian/Ubuntu system is needed), "
                               f"or copy WordNet 3.0 with a lexnames file into {wordnet_dir()}")
    proc = subprocess.run(["apt-get", "download", *PACKAGES], cwd=workdir, capture_output=True, text=True)
    debs = sorted(workdir.glob("*.deb"))
    if proc.returncode != 0 or len(debs) != len(PACKAGES):
        raise WordNetError(f"`apt-get download {' '.join(PACKAGES)}` failed (exit {proc.returncode}): "
                           f"{proc.stderr.strip() or proc.stdout.strip()}. If the package lists are stale, run "
                           f"`apt-get update` first.")
    versions = []
    for deb in debs:
        subprocess.run(["dpkg", "-x", str(deb), str(workdir / "root")], check=True, capture_output=True)
        fields = subprocess.run(["dpkg-deb", "-f", str(deb), "Package", "Version"], check=True,
                                capture_output=True, text=True).stdout.split("\n")
        versions.append(" ".join(f.split(": ", 1)[1] for f in fields if ": " in f))
    return "; ".join(versions)


def install(root: Path | None = None, force: bool = False) -> Path:
    """Fetch WordNet 3.0 from Debian and copy it (with a generated lexnames) into the nltk data folder."""
    target = wordnet_dir(root)
    if is_installed(root) and not force:
        return target
    with tempfile.TemporaryDirectory(prefix="wordnet-") as tmp:
        work = Path(tmp)
        versions = _apt_download(work)
        unpacked = work / "root"
        missing = [n for n in DATABASE_FILES if not (unpacked / _DB_DIR / n).is_file()]
        if missing:
            raise WordNetError(f"the Debian packages {PACKAGES} lack {missing}")
        lexnames = lexnames_from_man(gzip.decompress((unpacked / _MAN_PAGE).read_bytes()).decode("utf-8"))
        # build next to the target, then swap it in: a failure never leaves a half-copied folder
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=target.parent))
        try:
            staging.chmod(0o755)
            for name in DATABASE_FILES:
                shutil.copyfile(unpacked / _DB_DIR / name, staging / name)  # copies, never links
            (staging / "lexnames").write_text(lexnames)
            (staging / "VERSION").write_text(f"WordNet 3.0 from Debian {versions}\n")
            if target.exists():
                shutil.rmtree(target)
            os.replace(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging)
    reader.cache_clear()
    return target


def _missing_message(root: Path | None) -> str:
    return (f"WordNet (needed by METEOR) is not set up in {wordnet_dir(root)}: run `make wordnet` "
            f"(or `python -m metricbias.wordnet`), which fetches Debian's {' and '.join(PACKAGES)}")


@lru_cache(maxsize=None)
def reader():
    """An nltk ``WordNetCorpusReader`` on the project's copy (the folder is put on ``nltk.data.path``).

    The reader parses the index files when it is made (5 s); the parsed reader is kept beside the copy
    (:func:`_kept_reader`), which the next process loads in about 1 s."""
    if not is_installed():
        raise WordNetError(_missing_message(None))
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    root = str(nltk_data_dir())
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)  # nltk only opens files under its data path
    folder = nltk.data.find("corpora/wordnet")
    kept = _kept_reader()
    found = _load_kept(kept)
    if isinstance(found, WordNetCorpusReader) and getattr(found._root, "path", None) == folder.path:
        return found
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        made = WordNetCorpusReader(folder, None)
    _keep(made, kept)
    return made


def _kept_reader() -> Path:
    """Where the parsed reader is kept: named by the WordNet copy, nltk's version and Python's."""
    import nltk

    return wordnet_dir() / (f".reader-{signature_tag()}-nltk{nltk.__version__}-"
                            f"py{sys.version_info.major}.{sys.version_info.minor}.pickle")


def _load_kept(path: Path):
    """The reader kept at ``path``, or None (none kept, or unreadable: it is then made again and kept anew)."""
    import gc
    import pickle

    gc.disable()  # a large dict of small objects unpickles much faster without collections in between
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except Exception:  # missing, truncated or from other library versions: make it again
        return None
    finally:
        gc.enable()


def _keep(made, path: Path) -> None:
    """Keep the parsed reader at ``path`` without its open files (it reopens each when it needs it)."""
    import pickle
    from collections import defaultdict

    from .paths import atomic_path

    # the open files and the synsets read so far (which hold the reader), as nltk leaves them before their first use
    state = dict(vars(made), _data_file_map={}, _key_count_file=None, _key_synset_file=None,
                 _synset_offset_cache=defaultdict(dict))
    copy = object.__new__(type(made))
    copy.__dict__.update(state)
    try:
        with atomic_path(path, suffix=".pickle") as tmp:
            with open(tmp, "wb") as fh:
                pickle.dump(copy, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:  # a read-only copy: the next process parses the files again
        pass


def main(argv=None) -> int:
    force = "--force" in (argv if argv is not None else sys.argv[1:])
    try:
        target = install(force=force)
    except WordNetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"WordNet ready in {target} ({installed_version()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
