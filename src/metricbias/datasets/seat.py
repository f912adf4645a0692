"""WEAT / SEAT association test sets (May et al., 2019), named as in Gao & Wan (2022).

Each test file under ``seat/`` in the source registry holds one JSON object with
four keys: ``targ1`` and ``targ2`` (the target sets X and Y, which must have the
same size) and ``attr1`` and ``attr2`` (the attribute sets A and B), each
``{"category": str, "examples": [str, ...]}``. Despite the ``.jsonl`` suffix
the released files are a single (pretty-printed) JSON object.

:data:`TESTS` maps every test of Gao & Wan's Table 3 to its file at each level:
``word`` (single words), ``sent`` (semantically bleached sentences such as
"This is Amy.") and, for the Double Binds, ``sent (u)`` (semantically unbleached
sentences such as "Amy is an engineer."). The level labels are the paper's.
C9 is left out, as in the paper: its sentence-level version differs by pronoun.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .. import sources
from .published import DatasetError

LEVELS = ("word", "sent", "sent (u)")

#: Gao & Wan's test name -> {level: file stem under seat/}. -T: targets/attributes given as terms
#: ("woman", "girl"); -N: as first names ("Amy"). Order is that of Gao & Wan's Table 3.
TESTS: dict[str, dict[str, str]] = {
    "ABW-T": {"word": "angry_black_woman_stereotype_b", "sent": "sent-angry_black_woman_stereotype_b"},
    "ABW-N": {"word": "angry_black_woman_stereotype", "sent": "sent-angry_black_woman_stereotype"},
    "DB:C": {"sent (u)": "heilman_double_bind_competent_one_sentence",
             "sent": "sent-heilman_double_bind_competent_one_word",
             "word": "heilman_double_bind_competent_one_word"},
    "DB:L": {"sent (u)": "heilman_double_bind_likable_one_sentence",
             "sent": "sent-heilman_double_bind_likable_one_word",
             "word": "heilman_double_bind_likable_one_word"},
    "C1": {"word": "weat1", "sent": "sent-weat1"},
    "C2": {"word": "weat2", "sent": "sent-weat2"},
    "C3-T": {"word": "weat3b", "sent": "sent-weat3b"},
    "C3-N": {"word": "weat3", "sent": "sent-weat3"},
    "C4-N": {"word": "weat4", "sent": "sent-weat4"},
    "C5-T": {"word": "weat5b", "sent": "sent-weat5b"},
    "C5-N": {"word": "weat5", "sent": "sent-weat5"},
    "C6-T": {"word": "weat6b", "sent": "sent-weat6b"},
    "C6-N": {"word": "weat6", "sent": "sent-weat6"},
    "C7-T": {"word": "weat7", "sent": "sent-weat7"},
    "C7-N": {"word": "weat7b", "sent": "sent-weat7b"},
    "C8-T": {"word": "weat8", "sent": "sent-weat8"},
    "C8-N": {"word": "weat8b", "sent": "sent-weat8b"},
    "C10": {"word": "weat10", "sent": "sent-weat10"},
}

#: the tests that contrast no social group: C1 (flowers / insects against pleasant / unpleasant) and C2 (musical
#: instruments / weapons), the baseline tests Caliskan et al. (2017, WEAT 1 and 2) replicate from the Implicit
#: Association Test before the social ones, kept as such by May et al. (2019). A claim about social bias leaves them out.
BASELINE_TESTS = ("C1", "C2")

_KEYS = ("targ1", "targ2", "attr1", "attr2")


@dataclass(frozen=True)
class SeatTest:
    """One association test: targets X, Y and attributes A, B (tuples of texts)."""

    name: str  # Gao & Wan's name, e.g. "C6-N"
    level: str  # "word", "sent" or "sent (u)"
    source: str  # registry path, e.g. "seat/weat6.jsonl"
    x: tuple[str, ...]
    y: tuple[str, ...]
    a: tuple[str, ...]
    b: tuple[str, ...]
    categories: tuple[str, str, str, str]  # of X, Y, A, B

    @property
    def label(self) -> str:
        return f"{self.name} ({self.level})"

    @property
    def targets(self) -> tuple[str, ...]:
        """X ∪ Y, X first (the order the statistics index)."""
        return self.x + self.y

    @property
    def attributes(self) -> tuple[str, ...]:
        """A ∪ B, A first."""
        return self.a + self.b


def file_of(name: str, level: str) -> str:
    """The registry path of test ``name`` at ``level``."""
    if name not in TESTS:
        raise ValueError(f"unknown association test {name!r}; known: {', '.join(TESTS)} (or 'all')")
    if level not in TESTS[name]:
        raise ValueError(f"test {name} has no {level!r} level; it has: {', '.join(TESTS[name])}")
    return f"seat/{TESTS[name][level]}.jsonl"


def select(names="all", levels=None) -> list[tuple[str, str]]:
    """(name, level) pairs for ``names`` ("all", a name, a comma-separated string or a list) at ``levels``."""
    if names is None or names == "all" or names == ["all"]:
        names = list(TESTS)
    elif isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if levels is None or levels == "all":
        levels = list(LEVELS)
    elif isinstance(levels, str):
        levels = [lv.strip() for lv in levels.split(",") if lv.strip()]
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad:
        raise ValueError(f"unknown level(s) {bad}; levels are {', '.join(LEVELS)}")
    unknown = [n for n in names if n not in TESTS]
    if unknown:
        raise ValueError(f"unknown association test(s) {unknown}; known: {', '.join(TESTS)} (or 'all')")
    out = [(n, lv) for n in names for lv in LEVELS if lv in levels and lv in TESTS[n]]
    if not out:
        raise ValueError(f"tests {names} have none of the levels {levels}")
    return out


def read(path: str | Path, origin: str | None = None) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Parse and check one test file: ``{key: (category, examples)}`` for targ1, targ2, attr1, attr2.

    Malformed content raises :class:`DatasetError` naming the file (``origin``,
    default the path) and the line or key at fault.
    """
    origin = origin or str(path)
    text = Path(path).read_text(encoding="utf-8")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{origin}, line {exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(raw, dict):
        raise DatasetError(f"{origin}: expected one JSON object with keys {', '.join(_KEYS)}, "
                           f"found {type(raw).__name__}")
    out = {}
    for key in _KEYS:
        if key not in raw:
            raise DatasetError(f"{origin}: missing key {key!r} (a test needs {', '.join(_KEYS)})")
        entry = raw[key]
        if not isinstance(entry, dict) or not isinstance(entry.get("examples"), list):
            raise DatasetError(f"{origin}, key {key!r}: expected {{\"category\": ..., \"examples\": [...]}}")
        examples = entry["examples"]
        if not examples:
            raise DatasetError(f"{origin}, key {key!r}: no examples")
        for i, ex in enumerate(examples):
            if not isinstance(ex, str) or not ex.strip():
                raise DatasetError(f"{origin}, key {key!r}, example {i}: {ex!r} is not a non-empty string")
        out[key] = (str(entry.get("category", key)), tuple(examples))
    if len(out["targ1"][1]) != len(out["targ2"][1]):
        raise DatasetError(
            f"{origin}: targ1 has {len(out['targ1'][1])} examples but targ2 has {len(out['targ2'][1])}; "
            "the permutation test needs target sets of equal size"
        )
    return out


def load(name: str, level: str) -> SeatTest:
    """Test ``name`` (Gao & Wan's name) at ``level``, read from the verified source file."""
    rel = file_of(name, level)
    parts = read(sources.path(rel), origin=rel)
    return SeatTest(
        name=name, level=level, source=rel,
        x=parts["targ1"][1], y=parts["targ2"][1], a=parts["attr1"][1], b=parts["attr2"][1],
        categories=tuple(parts[k][0] for k in _KEYS),
    )


def subsample(test: SeatTest, size: int, seed: int = 0) -> SeatTest:
    """At most ``size`` examples of each of X, Y, A and B, drawn without replacement (``size`` 0: all).

    X and Y are drawn at the *same* positions, and so are A and B when they have
    the same size. The sentence-level files build paired sets from the same
    templates in the same order ("This is John.", ... / "This is Amy.", ...), so
    this keeps the templates balanced between the paired sets, as in the full
    test. Otherwise template overlap alone could make a word n-gram metric
    look biased. The draw is seeded by ``seed`` and the test's name and level.
    """
    if size < 0:
        raise ValueError(f"sample size must be 0 (all) or positive, got {size}")
    if size == 0 or max(len(test.x), len(test.a), len(test.b)) <= size:
        return test
    rng = np.random.default_rng([int(seed), zlib.crc32(f"{test.name}|{test.level}".encode("utf-8"))])

    def draw(n: int) -> np.ndarray:
        return np.sort(rng.choice(n, size, replace=False)) if n > size else np.arange(n)

    xy = draw(len(test.x))
    a = draw(len(test.a))
    b = a if len(test.b) == len(test.a) else draw(len(test.b))
    return replace(test, x=tuple(test.x[i] for i in xy), y=tuple(test.y[i] for i in xy),
                   a=tuple(test.a[i] for i in a), b=tuple(test.b[i] for i in b))


def tests(names="all", levels=None, sample_size: int = 0, seed: int = 0) -> list[SeatTest]:
    """Load every selected test (see :func:`select`), in Table 3 order.

    ``sample_size`` > 0 draws the sentence-level tests down to at most that many
    texts per set (:func:`subsample`). Word-level tests are always whole: they
    are WEAT's original word lists, at most 32 words per set.
    """
    return [load(n, lv) if lv == "word" else subsample(load(n, lv), sample_size, seed)
            for n, lv in select(names, levels)]


def overview(loaded: list[SeatTest]):
    """One row per test: name, level, file, categories and set sizes (a pandas frame)."""
    import pandas as pd

    return pd.DataFrame([{
        "test": t.name, "level": t.level, "file": t.source,
        "X": t.categories[0], "Y": t.categories[1], "A": t.categories[2], "B": t.categories[3],
        "|X|": len(t.x), "|Y|": len(t.y), "|A|": len(t.a), "|B|": len(t.b),
    } for t in loaded])
