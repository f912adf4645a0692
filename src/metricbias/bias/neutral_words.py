"""Neutral filler words for the noise floor's control pairs, of the identity word's part of speech and frequency.

The noise floor (:mod:`metricbias.bias.noise_floor`) replaces an identity word by two socially neutral words of
the same part of speech and *similar frequency*. This module gives both halves from data on hand, never from the
pairs the book evaluates:

* **Frequency** is the rank of a word in the Google News word2vec vocabulary (the Bolukbasi et al. subset of
  26,423 words, backbone ``word2vec-googlenews-bolukbasi``), which keeps the corpus's frequency order: rank r,
  frequency roughly ∝ 1/r. :func:`vocabulary_ranks` reads the words of the file alone (not the vectors).
* **Fillers** (:data:`FILLERS`, ``data/lexicons/neutral_fillers.tsv``) are written by :func:`build_fillers` from
  WordNet 3.0 and that vocabulary: lower-case words of the vocabulary that are

  - *nouns* (``noun``, and ``plural`` for plural forms): no adjective or adverb sense, no more verb senses than
    noun senses and not an inflected verb; the first noun sense below one of :data:`NOUN_ROOTS` (furniture,
    containers, vehicles, buildings, rooms, fruit, vegetables, trees, flowers, waters, landforms, fabrics,
    tableware, instruments, tools, roads) and no noun sense below one of :data:`EXCLUDED_ROOTS` (persons, social
    groups, drugs, weapons, body parts, animals, places of worship, ...);
  - *adjectives*: not an inflected form (no comparatives or superlatives), at least as many adjective senses as
    noun and verb senses together, the first adjective sense (through the head of a satellite) the value of one
    of :data:`NEUTRAL_ATTRIBUTES` (temperature, size, length, wetness, brightness, loudness, hardness, depth,
    thickness, width, weight);
  - neither an identity term of any ``data/lexicons`` file, nor a word of :data:`EXCLUDED_WORDS` (words of those
    classes used of people as insults or stereotypes).

  Within a kind the words, in order of rank, are paired neighbour with neighbour, so the two words of a filler
  pair have similar frequencies. :func:`nearest_fillers` gives, for an identity word of known rank, the filler
  pairs of its kind whose mean log rank is nearest to its own.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..datasets.lexicons import lexicon_dir

#: the neutral noun classes (WordNet synsets) a filler noun's first sense lies below
NOUN_ROOTS = ("furniture.n.01", "container.n.01", "conveyance.n.03", "building.n.01", "room.n.01",
              "edible_fruit.n.01", "vegetable.n.01", "tree.n.01", "flower.n.01", "body_of_water.n.01",
              "geological_formation.n.01", "fabric.n.01", "tableware.n.01", "musical_instrument.n.01",
              "hand_tool.n.01", "road.n.01")
#: noun classes that name or touch on people and social life: no sense of a filler noun lies below them
EXCLUDED_ROOTS = ("person.n.01", "social_group.n.01", "drug.n.01", "weapon.n.01", "body_part.n.01", "animal.n.01",
                  "causal_agent.n.01", "place_of_worship.n.01", "military_vehicle.n.01", "prison.n.01")
#: the attributes (WordNet nouns) a filler adjective is a value of
NEUTRAL_ATTRIBUTES = ("temperature.n.01", "size.n.01", "length.n.01", "wetness.n.01", "brightness.n.01",
                      "luminosity.n.01", "loudness.n.01", "volume.n.03", "hardness.n.01", "depth.n.01",
                      "thickness.n.01", "width.n.01", "weight.n.01")
#: words of those classes used of people as insults or stereotypes
EXCLUDED_WORDS = frozenset({"lazy", "sleazy", "tacky", "thirsty", "monstrous", "fat", "thin", "skinny", "obese",
                            "dirty", "cheap", "dense", "thick", "shallow", "hot", "dark", "fair", "light", "pale",
                            "short", "tall", "small", "big", "large", "heavy", "gigantic", "huge", "tiny",
                            "wheelchair", "throne", "nursery", "consulate", "embassy", "casino", "mosque",
                            "church", "temple", "synagogue", "cathedral", "pub", "bar", "brothel", "jail", "midget",
                            "petite", "diminutive", "hulking", "heroic", "epic", "great"})
#: the filler table's name under ``data/lexicons``, one pair a row: kind, word_1, word_2, rank_1, rank_2
FILLERS = "neutral_fillers.tsv"
KINDS = ("noun", "plural", "adjective")
#: how many filler pairs nearest in frequency an identity word draws from
NEAREST = 5


def vocabulary_ranks(path) -> dict[str, int]:
    """``{word: rank}`` of a word2vec binary file's vocabulary, in file order (0 = the first), read without
    the vectors."""
    data = Path(path).read_bytes()
    end = data.index(b"\n")
    count, dim = map(int, data[:end].split())
    pos, ranks = end + 1, {}
    for rank in range(count):
        space = data.index(b" ", pos)
        word = data[pos:space].strip().decode("utf-8", errors="replace")
        ranks.setdefault(word, rank)
        pos = space + 1 + 4 * dim
    return ranks


@lru_cache(maxsize=1)
def default_ranks() -> dict[str, int]:
    """:func:`vocabulary_ranks` of the ``word2vec-googlenews-bolukbasi`` backbone; ``{}`` where it is not
    installed (then no frequency matching: every filler pair of a kind is drawn alike)."""
    from .. import backbones

    try:
        return vocabulary_ranks(backbones.resolve("word2vec-googlenews-bolukbasi"))
    except Exception:  # not installed: fillers are drawn without frequency matching
        return {}


def _identity_terms() -> set[str]:
    """Every identity term of the ``data/lexicons`` files, lower-cased, word by word."""
    import yaml

    terms = set()
    for path in lexicon_dir().glob("*.yml"):
        for row in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("terms", []) or []:
            for key, value in row.items():
                if key in ("form",):
                    continue
                for term in value if isinstance(value, list) else [value]:
                    terms.update(str(term).lower().split())
    return terms


def _below(synset, targets: set) -> bool:
    return synset in targets or bool(targets & set(synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms())))


def classify(word: str, wn, roots: set, excluded: set, attributes: set) -> str | None:
    """The filler kind of ``word`` under the rules of the module docstring, or None."""
    nouns, verbs = wn.synsets(word, pos="n"), wn.synsets(word, pos="v")
    adjectives = wn.synsets(word, pos="a") + wn.synsets(word, pos="s")
    if adjectives:
        participle = any(base != word for base in wn._morphy(word, "v"))  # "dried", "warming": verb forms
        if participle or wn._morphy(word, "a") != [word] or len(adjectives) < len(nouns) + len(verbs):
            return None
        first = adjectives[0] if adjectives[0].pos() == "a" else (adjectives[0].similar_tos() or adjectives[:1])[0]
        return "adjective" if attributes & set(first.attributes()) else None
    if not nouns or wn.synsets(word, pos="r") or (verbs and (wn.morphy(word, "v") != word or len(verbs) >= len(nouns))):
        return None
    if not _below(nouns[0], roots) or any(_below(s, excluded) for s in nouns):
        return None
    return "plural" if wn.morphy(word, "n") != word else "noun"


def build_fillers(ranks: dict[str, int] | None = None, wn=None) -> list[dict]:
    """The filler pairs (module docstring): ``kind, word_1, word_2, rank_1, rank_2``, each kind's words of the
    vocabulary ``ranks`` (default: :func:`default_ranks`) paired in order of rank."""
    if wn is None:
        from ..wordnet import reader

        wn = reader()
    ranks = default_ranks() if ranks is None else ranks
    roots, excluded = {wn.synset(s) for s in NOUN_ROOTS}, {wn.synset(s) for s in EXCLUDED_ROOTS}
    attributes = {wn.synset(s) for s in NEUTRAL_ATTRIBUTES}
    banned = EXCLUDED_WORDS | _identity_terms()
    words = {kind: [] for kind in KINDS}
    for word, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(word) < 3 or not word.isalpha() or not word.islower() or word in banned:
            continue
        if (wn.morphy(word, "n") or word) in banned:  # "wheelchairs": the plural of an excluded noun
            continue
        kind = classify(word, wn, roots, excluded, attributes)
        if kind:
            words[kind].append((word, rank))
    return [{"kind": kind, "word_1": a[0], "word_2": b[0], "rank_1": a[1], "rank_2": b[1]}
            for kind in KINDS for a, b in zip(words[kind][0::2], words[kind][1::2])]


def write_fillers(rows: list[dict], path: Path | None = None) -> Path:
    """Write :func:`build_fillers`'s rows as the filler table (tab-separated, with a header; default
    ``data/lexicons/neutral_fillers.tsv``)."""
    path = path or lexicon_dir() / FILLERS
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["kind", "word_1", "word_2", "rank_1", "rank_2"], delimiter="\t",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


@lru_cache(maxsize=1)
def fillers() -> dict[str, list[tuple[str, str, float]]]:
    """``{kind: [(word_1, word_2, mean log rank), ...]}`` from the shipped filler table."""
    out: dict[str, list] = {kind: [] for kind in KINDS}
    with open(lexicon_dir() / FILLERS, encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            mean = (np.log1p(int(row["rank_1"])) + np.log1p(int(row["rank_2"]))) / 2
            out[row["kind"]].append((row["word_1"], row["word_2"], float(mean)))
    return out


def nearest_fillers(kind: str, word: str, *, ranks: dict[str, int] | None = None, k: int = NEAREST
                    ) -> list[tuple[str, str]]:
    """The ``k`` filler pairs of ``kind`` whose mean log rank is nearest to ``word``'s (every pair of the kind
    where ``word`` has no rank); pairs containing ``word`` are left out."""
    ranks = default_ranks() if ranks is None else ranks
    pairs = [p for p in fillers().get(kind, []) if word.lower() not in p[:2]]
    rank = ranks.get(word, ranks.get(word.lower()))
    if rank is None:
        return [p[:2] for p in pairs]
    order = np.argsort([abs(p[2] - np.log1p(rank)) for p in pairs], kind="stable")
    return [pairs[i][:2] for i in order[:k]]


__all__ = ["EXCLUDED_ROOTS", "EXCLUDED_WORDS", "FILLERS", "KINDS", "NEAREST", "NEUTRAL_ATTRIBUTES", "NOUN_ROOTS",
           "build_fillers", "classify", "default_ranks", "fillers", "nearest_fillers", "vocabulary_ranks",
           "write_fillers"]
