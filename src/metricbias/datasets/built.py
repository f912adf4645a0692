"""Build and load the paired-candidate datasets (one TSV per attribute).

``build()`` turns the raw sources into ``<out>/<attribute>.tsv`` (the pairs,
columns :data:`TSV_COLUMNS`: one shared reference) and ``<out>/<attribute>.excluded.tsv``
(the pairs left out, with a reason); ``load()`` reads ``data/built/``, builds whatever
is missing or stale first, and returns the pairs in the pair layout (:mod:`.schema`).
Attributes come from ``data/lexicons/attributes.yml`` (:func:`attributes`;
``ATTRIBUTES`` is the same list, read on access).

Outputs are written atomically and are byte-for-byte deterministic. A
``<attribute>.fingerprint`` file records what a TSV was built from (the
configuration, lexicon, builder code and raw-source checksums), so an edited
lexicon rebuilds on the next ``load()``.
"""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

import pandas as pd

from .. import sources
from ..paths import atomic_path, built_dir
from . import checks, crows_pairs, lexicons, stereoset, winobias
from .published import DatasetError, check_attributes
from .schema import PAIR_COLUMNS, conform
from .textedit import tidy

#: the columns of a built TSV, as the builders write them (one reference for both candidates)
TSV_COLUMNS = ["pair_id", "attribute", "source", "source_id", "group_1", "group_2", "candidate_1", "candidate_2",
               "reference", "direction", "reference_method"]
EXCLUSION_COLUMNS = ["attribute", "source", "source_id", "reason", "detail", "candidate_1", "candidate_2"]
DIRECTIONS = ("stereo", "antistereo")
#: a built pair that still breaks a rule of ``datasets.checks`` is excluded with reason ``check:<rule>``
CHECK_REASONS = {f"check:{name}": rule.description for name, rule in checks.RULES.items()}
#: source -> exclusion reason -> what it means
REASONS = {"winobias": {**winobias.REASONS, **CHECK_REASONS}, "crows_pairs": {**crows_pairs.REASONS, **CHECK_REASONS},
           "stereoset": {**stereoset.REASONS, **CHECK_REASONS}}
_SOURCE_FILES = {"winobias": [f for s in winobias.SUBSETS for f in winobias.files(s)],
                 "crows_pairs": [crows_pairs.FILE], "stereoset": [stereoset.FILE]}
_CODE = [Path(m.__file__) for m in (winobias, crows_pairs, stereoset, lexicons, checks)] + [Path(__file__)]
_CODE.append(Path(__file__).with_name("textedit.py"))


def attributes() -> list[str]:
    """The configured attributes, in ``attributes.yml`` order."""
    return lexicons.attributes()


def __getattr__(name: str):
    if name == "ATTRIBUTES":  # read on access: the configuration may change (tests fork it)
        return tuple(attributes())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _lexicon_names(config: dict) -> list[str]:
    return list(dict.fromkeys(e["lexicon"] for e in config.values() if e.get("lexicon")))


def fingerprint(attribute: str, config: dict | None = None) -> str:
    """What the attribute's TSV is built from: its config entry, lexicons, builder code, raw checksums."""
    config = config or lexicons.read_config()
    entry = config[attribute]
    h = hashlib.sha256(repr(sorted(entry.items())).encode())
    names = _lexicon_names(config) if entry["source"] == "crows_pairs" else [entry.get("lexicon")]
    for name in filter(None, names):
        h.update(lexicons.lexicon_path(name).read_bytes())
    for path in _CODE:
        h.update(path.read_bytes())
    for name in _SOURCE_FILES[entry["source"]]:
        h.update(sources.source(name).sha256.encode())
    return h.hexdigest()


def build_attribute(attribute: str, config: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairs and the exclusions of one attribute, as frames (nothing written)."""
    config = config or lexicons.read_config()
    if attribute not in config:
        raise ValueError(f"unknown attribute {attribute!r}; configured: {', '.join(config)}")
    entry = config[attribute]
    if entry["source"] == "winobias":
        rows, excluded = winobias.build(attribute, lexicons.load(entry["lexicon"]),
                                        entry.get("subsets") or winobias.SUBSETS)
    elif entry["source"] == "crows_pairs":
        own = lexicons.load(entry["lexicon"])
        others = [lexicons.load(n) for n in _lexicon_names(config) if n != entry["lexicon"]]
        rows, excluded = crows_pairs.build(attribute, own, entry["bias_types"], others)
    else:
        rows, excluded = stereoset.build(attribute, entry["bias_types"], entry["abstract"])
    pairs = pd.DataFrame(rows, columns=TSV_COLUMNS)
    for col in ("candidate_1", "candidate_2", "reference"):  # the sources' slips of typing (datasets.checks)
        pairs[col] = pairs[col].map(tidy)
    pairs, failed = _apply_checks(pairs, config)
    _validate(pairs, attribute)
    return pairs, pd.DataFrame(excluded + failed, columns=EXCLUSION_COLUMNS)


def check_lexicons(config: dict | None = None) -> dict:
    """attribute -> (its lexicon, the other attributes' lexicons): what the attribute rules of
    ``datasets.checks`` compare the differing words with. Attributes without a lexicon (StereoSet) are left out."""
    config = config or lexicons.read_config()
    names = list(dict.fromkeys(e["lexicon"] for e in config.values() if e.get("lexicon")))
    loaded = {n: lexicons.load(n) for n in names}
    return {a: (loaded[e["lexicon"]], [loaded[n] for n in names if n != e["lexicon"]])
            for a, e in config.items() if e.get("lexicon")}


def check(pairs: pd.DataFrame, config: dict | None = None, id_column: str = "pair_id") -> pd.DataFrame:
    """The findings of every rule of ``datasets.checks`` on a pair table (built pairs, or :func:`source_pairs`
    with ``id_column="source_id"``)."""
    return checks.check_pairs(pairs, check_lexicons(config), id_column=id_column)


def _apply_checks(pairs: pd.DataFrame, config: dict) -> tuple[pd.DataFrame, list[dict]]:
    """Built pairs that still break a rule are left out (reason ``check:<rule>``, the first rule broken)."""
    found = check(pairs, config)
    if found.empty:
        return pairs, []
    first = found.drop_duplicates("id").set_index("id")
    bad = pairs["pair_id"].isin(first.index)
    failed = [{"attribute": r.attribute, "source": r.source, "source_id": r.source_id,
               "reason": f"check:{first.at[r.pair_id, 'rule']}",
               "detail": f"{first.at[r.pair_id, 'column']}: {first.at[r.pair_id, 'detail']}",
               "candidate_1": r.candidate_1, "candidate_2": r.candidate_2} for r in pairs[bad].itertuples()]
    return pairs[~bad].reset_index(drop=True), failed


def source_pairs(attributes=None) -> pd.DataFrame:
    """Every pair an attribute takes from its raw source, as the source writes it (before the builders' fixes):
    ``attribute, source, source_id, candidate_1, candidate_2`` (WinoBias without the final period, as built)."""
    config = lexicons.read_config()
    rows = []
    for name in check_attributes(attributes, known=tuple(config)):
        entry = config[name]
        if entry["source"] == "winobias":
            found = winobias.source_pairs(entry.get("subsets") or winobias.SUBSETS)
        elif entry["source"] == "crows_pairs":
            found = [(str(r["id"]), r["sent_more"], r["sent_less"]) for r in crows_pairs.read()
                     if r["bias_type"] in entry["bias_types"]]
        else:
            found = [(t["id"], t["stereotype"], t["anti_stereotype"]) for t in stereoset.read()
                     if t["bias_type"] in entry["bias_types"]]
        rows += [{"attribute": name, "source": entry["source"], "source_id": i, "candidate_1": c1, "candidate_2": c2}
                 for i, c1, c2 in found]
    return pd.DataFrame(rows, columns=["attribute", "source", "source_id", "candidate_1", "candidate_2"])


def _validate(pairs: pd.DataFrame, attribute: str) -> None:
    """Guards on what every consumer relies on; a failure here is a builder bug, not bad input."""
    where = f"built dataset {attribute!r}"
    if pairs.empty:
        raise DatasetError(f"{where}: no pair could be built; check the bias_types in attributes.yml")
    dup = pairs["pair_id"][pairs["pair_id"].duplicated()]
    if len(dup):
        raise DatasetError(f"{where}: duplicate pair_id(s) {sorted(set(dup))[:5]}")
    bad = ~pairs["direction"].isin(DIRECTIONS)
    if bad.any():
        raise DatasetError(f"{where}: direction {pairs.loc[bad, 'direction'].iloc[0]!r} not in {DIRECTIONS}")
    for col in TSV_COLUMNS:
        text = pairs[col].astype(str)
        empty = text.str.strip() == ""
        if empty.any():
            raise DatasetError(f"{where}: empty {col} in pair {pairs.loc[empty, 'pair_id'].iloc[0]}")
        control = text.str.contains(r"[\t\n\r]")
        if control.any():
            raise DatasetError(f"{where}: tab or newline in {col} of pair {pairs.loc[control, 'pair_id'].iloc[0]}")


def _write_tsv(frame: pd.DataFrame, target: Path) -> None:
    with atomic_path(target, suffix=".tsv") as tmp:
        frame.to_csv(tmp, sep="\t", index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


#: what a build folder may hold: the files :func:`build` writes (a TSV only with its fingerprint beside it), the
#: counterfactual sets' folder, and the temporary files of a write in progress
_OURS = re.compile(r"(?P<name>.+?)(\.excluded)?\.tsv|.+\.fingerprint")


def check_folder(folder) -> None:
    """Refuse a build folder that holds a file metricbias did not write, so that no build overwrites it: a TSV
    without its ``.fingerprint`` beside it, or any other file."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    for f in sorted(folder.iterdir()):
        if f.name.startswith(".") or (f.is_dir() and f.name == "counterfactuals"):
            continue
        match = _OURS.fullmatch(f.name) if f.is_file() else None
        if match is None or (match["name"] and not (folder / f"{match['name']}.fingerprint").is_file()):
            raise DatasetError(f"{folder}: holds {f.name}, which metricbias did not write; built pairs go into an "
                               "empty folder or one that `metricbias build-datasets --out` wrote (to audit your own "
                               "pairs, pass them with --pairs FILE)")


def build(attributes=None, out=None) -> pd.DataFrame:
    """Build the attributes (default: all configured) into ``out`` (default ``data/built``).

    Returns one row per attribute: ``attribute, source, pairs, excluded, path``. A folder holding files that
    metricbias did not write is refused (:func:`check_folder`).
    """
    config = lexicons.read_config()
    names = check_attributes(attributes, known=tuple(config))
    out = Path(out) if out is not None else built_dir()
    check_folder(out)
    summary = []
    for name in names:
        pairs, excluded = build_attribute(name, config)
        _write_tsv(pairs, out / f"{name}.tsv")
        _write_tsv(excluded, out / f"{name}.excluded.tsv")
        with atomic_path(out / f"{name}.fingerprint") as tmp:
            tmp.write_text(fingerprint(name, config) + "\n", encoding="utf-8")
        summary.append({"attribute": name, "source": config[name]["source"], "pairs": len(pairs),
                        "excluded": len(excluded), "path": out / f"{name}.tsv"})
    return pd.DataFrame(summary)


def _read_tsv(path: Path, columns: list[str]) -> pd.DataFrame:
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, quoting=csv.QUOTE_MINIMAL)
    if list(frame.columns) != columns:
        raise DatasetError(f"{path}, row 1: columns {list(frame.columns)}, expected {columns}")
    return frame


def _ensure(names: list[str], folder: Path) -> None:
    config = lexicons.read_config()
    stale = []
    for name in names:
        stamp = folder / f"{name}.fingerprint"
        if not (folder / f"{name}.tsv").exists() or not (folder / f"{name}.excluded.tsv").exists() \
                or not stamp.exists() or stamp.read_text(encoding="utf-8").strip() != fingerprint(name, config):
            stale.append(name)
    if stale:
        build(stale, folder)


def load(attributes=None, folder=None) -> pd.DataFrame:
    """The built pairs in the pair layout (:data:`~metricbias.datasets.schema.PAIR_COLUMNS`, the shared reference
    on both sides, dataset ``built``), then ``source, source_id, direction, reference_method``; missing or stale
    attributes are built first.

    ``folder`` is where they are read from (default ``data/built``; a fork built with
    ``metricbias build-datasets --out DIR`` passes ``DIR``).
    """
    names = check_attributes(attributes, known=tuple(lexicons.attributes()))
    folder = built_dir() if folder is None else Path(folder)
    check_folder(folder)
    _ensure(names, folder)
    tsv = pd.concat([_read_tsv(folder / f"{n}.tsv", TSV_COLUMNS) for n in names], ignore_index=True)
    pairs = tsv.rename(columns={"reference": "reference_1"}).assign(dataset="built")
    pairs["reference_2"] = pairs["reference_1"]
    return pairs[[*PAIR_COLUMNS, *(c for c in TSV_COLUMNS if c not in (*PAIR_COLUMNS, "reference"))]]


def exclusions(attributes=None) -> pd.DataFrame:
    """The pairs left out, with ``reason`` (see :data:`REASONS`) and ``detail``."""
    names = check_attributes(attributes, known=tuple(lexicons.attributes()))
    folder = built_dir()
    _ensure(names, folder)
    return pd.concat([_read_tsv(folder / f"{n}.excluded.tsv", EXCLUSION_COLUMNS) for n in names], ignore_index=True)


# --- agreement with the released datasets ---------------------------------------------------------

def normalize_text(text: str) -> str:
    """Lower-case words only: how pairs are matched across releases (whitespace and punctuation ignored)."""
    return " ".join(re.sub(r"[^\w\s]|_", " ", text.lower()).split())


def token_edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between the token sequences of two texts (NLTK)."""
    from nltk.metrics.distance import edit_distance

    from .textedit import tokenize

    return edit_distance([t.text for t in tokenize(a)], [t.text for t in tokenize(b)])


def difference_kind(ours: str, released: str) -> str:
    """How two references differ: ``none``, ``case``, ``punctuation`` (or spacing), ``possessive`` ('s), ``wording``."""
    if ours == released:
        return "none"
    if ours.lower() == released.lower():
        return "case"
    if normalize_text(ours) == normalize_text(released):
        return "punctuation"
    if normalize_text(ours.replace("'s", "")) == normalize_text(released.replace("'s", "")):
        return "possessive"
    return "wording"


def match_published(attributes=None) -> pd.DataFrame:
    """Every released pair of Sun et al. with what the build made of it.

    ``status`` is ``built`` (a built pair has the same candidates, matched with
    :func:`normalize_text`), ``excluded`` (the source pair is among the
    exclusions; ``reason`` says why) or ``not_in_source`` (no raw pair has these
    candidates). For built pairs, ``exact`` says whether the references are
    byte-identical, ``same_normalized`` whether they agree up to case,
    whitespace and punctuation, ``difference`` how they differ
    (:func:`difference_kind`) and ``token_edit_distance`` how far apart they are.
    """
    from . import published

    names = [a for a in check_attributes(attributes, known=published.ATTRIBUTES)]
    built_pairs, excluded = load(names), exclusions(names)
    rows = []
    for name in names:
        mine = built_pairs[built_pairs["attribute"] == name]
        index = {}
        for r in mine.itertuples():
            index.setdefault((normalize_text(r.candidate_1), normalize_text(r.candidate_2)), r)
        dropped = {}
        for r in excluded[excluded["attribute"] == name].itertuples():
            dropped.setdefault((normalize_text(r.candidate_1), normalize_text(r.candidate_2)), r)
        for p in published.pairs(name).itertuples():
            key = (normalize_text(p.candidate_1), normalize_text(p.candidate_2))
            row = {"attribute": name, "published_pair_id": p.pair_id, "candidate_1": p.candidate_1,
                   "candidate_2": p.candidate_2, "published_reference": p.reference_1, "pair_id": "",
                   "reference": "", "reference_method": "", "reason": "", "exact": False,
                   "same_normalized": False, "difference": "", "token_edit_distance": pd.NA}
            hit = index.get(key)
            if hit is not None:
                ours, released = hit.reference_1, p.reference_1
                row.update(status="built", pair_id=hit.pair_id, reference=ours,
                           reference_method=hit.reference_method, exact=ours == released,
                           same_normalized=normalize_text(ours) == normalize_text(released),
                           difference=difference_kind(ours, released),
                           token_edit_distance=token_edit_distance(ours, released))
            elif key in dropped:
                row.update(status="excluded", reason=dropped[key].reason)
            else:
                row.update(status="not_in_source")
            rows.append(row)
    out = pd.DataFrame(rows)
    out["token_edit_distance"] = out["token_edit_distance"].astype("Int64")
    return out


def matched_pairs(attributes=None) -> pd.DataFrame:
    """The released pairs that were also built, in the pair layout (:mod:`.schema`), twice:
    ``dataset`` = ``built`` (both candidates against the built reference) and ``released`` (each candidate
    against its own released reference, as the paper scored them). Both sides carry the released pair's id
    (two released pairs may match one built pair); ``built_pair_id`` names the built pair."""
    from . import published

    match = match_published(attributes)
    match = match[match["status"] == "built"]
    released = published.pairs(sorted(match["attribute"].unique())).set_index("pair_id")
    common = {"attribute": match["attribute"].to_numpy(), "candidate_1": match["candidate_1"].to_numpy(),
              "candidate_2": match["candidate_2"].to_numpy()}
    ids = {"pair_id": match["published_pair_id"].to_numpy(), "built_pair_id": match["pair_id"].to_numpy()}
    built = pd.DataFrame({"dataset": "built", **ids, **common,
                          "reference_1": match["reference"].to_numpy(), "reference_2": match["reference"].to_numpy()})
    rel = pd.DataFrame({"dataset": "released", **ids, **common,
                        "reference_1": match["published_reference"].to_numpy(),
                        "reference_2": released.loc[match["published_pair_id"], "reference_2"].to_numpy()})
    return conform(pd.concat([built, rel], ignore_index=True), "matched pairs")
