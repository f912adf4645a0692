"""Chapter 3: Sun et al.'s Figure 3, BERTScore's matching maps of a stereotyped pair, and the pull
of the reference word on each candidate's pronoun.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...datasets import published
from ...metrics import get
from ...scoring import score_texts


def figure3_example(reference_word: str = "nurse", pronoun: str = "she") -> pd.Series:
    """The first released gender pair whose reference names ``reference_word`` and whose candidate 1 says ``pronoun``."""
    pairs = published.pairs(["gender"])
    hit = pairs[pairs["reference_1"].str.contains(rf"\b{reference_word}\b")
                & pairs["candidate_1"].str.contains(rf"\b{pronoun}\b")]
    return hit.iloc[0]


def figure3_texts(example: pd.Series) -> pd.DataFrame:
    """The example pair as rows of text: reference, candidate 1, candidate 2."""
    return pd.DataFrame({"text": ["reference", "candidate 1", "candidate 2"],
                         "sentence": [example["reference_1"], example["candidate_1"], example["candidate_2"]]})


def figure3_maps(example: pd.Series, backbone: str = "all-MiniLM-L6-v2", device: str = "auto") -> dict:
    """BERTScore and MoverScore matching maps of each candidate of ``example`` against its reference.

    Returns ``{(metric, candidate): (map, score)}`` with ``metric`` in BERTScore, MoverScore and
    ``candidate`` in candidate_1, candidate_2; BERTScore's score is its F, MoverScore's the map's own
    (idf from the released gender pairs, as on the full dataset).
    """
    pairs = published.pairs(["gender"])
    corpus = (pairs["candidate_1"].tolist() + pairs["candidate_2"].tolist(),
              pairs["reference_1"].tolist() + pairs["reference_2"].tolist())
    bs = get("bertscore", backbone=backbone, device=device)
    ms = get("moverscore", backbone=backbone, device=device)
    out = {}
    for key in ("candidate_1", "candidate_2"):
        score, = score_texts(bs, [example[key]], [example["reference_1"]], what="Figure 3")
        out[("BERTScore", key)] = (bs.matching_map(example[key], example["reference_1"]), float(score))
        mm = ms.matching_map(example[key], example["reference_1"], corpus=corpus)
        out[("MoverScore", key)] = (mm, float(mm.score))
    return out


def _pull(mm, token: str, ref_token: str) -> tuple[str, float]:
    """BERTScore: the token's best match and its cosine with ``ref_token``; MoverScore: where most of the token's
    mass goes and the share of its mass moved to ``ref_token`` (all occurrences)."""
    row = np.asarray(mm.matrix[mm.candidate_tokens.index(token)])
    best = mm.reference_tokens[int(np.argmax(row))]
    cols = [j for j, t in enumerate(mm.reference_tokens) if t == ref_token]
    value = row[cols].max() if mm.metric == "bertscore" else row[cols].sum() / row.sum()
    return best, float(value)


def figure3_pull(maps: dict, pronouns=("she", "he"), reference_word: str = "nurse") -> pd.DataFrame:
    """Per candidate pronoun: BERTScore's greedy match and cosine with ``reference_word``, and the share of its
    MoverScore mass moved to ``reference_word`` (pronouns or the word missing from a map are left out)."""
    rows = []
    for key, pronoun in zip(("candidate_1", "candidate_2"), pronouns):
        bmap, mmap = maps[("BERTScore", key)][0], maps[("MoverScore", key)][0]
        if pronoun in bmap.candidate_tokens and reference_word in bmap.reference_tokens:
            b_best, cosine = _pull(bmap, pronoun, reference_word)
            m_best, share = _pull(mmap, pronoun, reference_word)
            rows.append({"pronoun": pronoun, "BERTScore greedy match": b_best, f"cosine with {reference_word}": cosine,
                         f"MoverScore mass to {reference_word}": share})
    return pd.DataFrame(rows)


def figure3_findings(pull: pd.DataFrame, maps: dict, reference_word: str = "nurse") -> dict:
    """What the maps show, as numbers and words: each pronoun's cosine with ``reference_word`` in the backbone's
    last layer (``she_cosine``, ``he_cosine``; ``closer``: "closer to" or "farther from", *she* against *he*), the
    share of its MoverScore mass moved to it (``she_mass``, ``he_mass``), each metric's score of the two candidates
    (``she_bertscore``, ``he_bertscore``, ``she_moverscore``, ``he_moverscore``), how the stereotypical candidate
    (the first, *she*) scores (``she_scores``, :func:`scores_words`) and ``contrast``: "yet" when every score goes
    against the cosine (closer but lower, or farther but higher), else "and". NaN and empty words when the pull
    table lacks a pronoun."""
    if len(pull) != 2:
        nan = float("nan")
        return {"she_cosine": nan, "he_cosine": nan, "closer": "", "she_mass": nan, "he_mass": nan,
                **{f"{p}_{m}": nan for p in ("she", "he") for m in ("bertscore", "moverscore")},
                "she_scores": "", "contrast": ""}
    (she_cos, he_cos) = pull[f"cosine with {reference_word}"].astype(float)
    (she_mass, he_mass) = pull[f"MoverScore mass to {reference_word}"].astype(float)
    scores = {m: (float(maps[(m, "candidate_1")][1]), float(maps[(m, "candidate_2")][1]))
              for m in ("BERTScore", "MoverScore")}
    higher = {m: she > he for m, (she, he) in scores.items()}
    against = all(h != (she_cos > he_cos) for h in higher.values())
    return {"she_cosine": she_cos, "he_cosine": he_cos, "closer": "closer to" if she_cos > he_cos else "farther from",
            "she_mass": she_mass, "he_mass": he_mass,
            **{f"{p}_{m.lower()}": v[i] for m, v in scores.items() for i, p in enumerate(("she", "he"))},
            "she_scores": scores_words(higher), "contrast": "yet" if against else "and"}


def scores_words(higher: dict) -> str:
    """Whether a candidate scores higher than the other, per metric, in words: "higher on both metrics", "lower on
    both metrics", or "higher on BERTScore and lower on MoverScore"."""
    if len(set(higher.values())) == 1:
        side = "higher" if next(iter(higher.values())) else "lower"
        return f"{side} on both metrics" if len(higher) == 2 else f"{side} on every metric"
    return " and ".join(f"{'higher' if h else 'lower'} on {m}" for m, h in higher.items())


