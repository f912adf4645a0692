"""Chapter 7: why Table 7's BLEU and static-embedding rows on REALSumm differ from ours.

* :func:`bleu_variants`: BLEU's system-level Spearman with LitePyramid recall under the settings Gao & Wan leave
  unstated (sentence BLEU averaged per system or corpus BLEU per system; case kept or lowercased; whitespace or
  sacreBLEU's 13a tokens), on the original and the gender-swapped set, beside Table 7, each with its 95% interval;
* :func:`bleu_findings`: the numbers the page cites from it (the spread over the settings, the lowercased corpus
  BLEU's values against Table 7's);
* :func:`meteor_variants`: NLTK METEOR's system-level Spearman on REALSumm with and without stem matches, on tokens
  in order or as a set, beside Table 7's METEOR; :func:`meteor_findings`: its range for the page;
* :func:`table7_row`: Table 7's value and ours for one metric (METEOR, whose gap the page leaves unexplained);
* :func:`with_nearest_bleu`: a Table 7 comparison with the setting nearest Table 7 as a second BLEU row;
* :func:`capitalised_share`: the share of words written with a capital inside a sentence (names), which case-
  sensitive BLEU must match;
* :func:`vector_share`: the share of word tokens a static-embedding metric finds a vector for;
* :func:`nlgeval_variant`: embedding average, vector extrema and greedy matching on our vectors with nlg-eval's
  handling of words (the code Gao & Wan name), beside Table 7.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: BLEU settings Table 7 does not state: label -> (level, case, tokens). "sentence": the study's BLEU (sacreBLEU
#: sentence BLEU, floor smoothing) averaged over a system's summaries; "corpus": sacreBLEU's corpus BLEU over them
BLEU_VARIANTS: dict[str, tuple[str, str, str]] = {
    "sentence BLEU, case kept": ("sentence", "kept", "none"),
    "sentence BLEU, lowercased": ("sentence", "lowercased", "none"),
    "corpus BLEU per system, case kept": ("corpus", "kept", "none"),
    "corpus BLEU per system, lowercased": ("corpus", "lowercased", "none"),
    "corpus BLEU per system, 13a tokens, case kept": ("corpus", "kept", "13a"),
    "corpus BLEU per system, 13a tokens, lowercased": ("corpus", "lowercased", "13a"),
}
#: the words that head :func:`bleu_variants`' columns in the appendix
VARIANT_COLUMNS = {"variant": "setting", "n_systems": "systems", "ci_low": "95% CI low", "ci_high": "95% CI high",
                   "paper_origin": "origin (paper)", "paper_swap": "swap (paper)",
                   "paper_inside": "paper inside our interval"}
#: the variant that is the study's own BLEU row of Table 7's comparison
STUDY_VARIANT = "sentence BLEU, case kept"


def system_bleu(dataset, level: str, case: str, tokens: str, *, cache=None) -> pd.Series:
    """BLEU per system of a single-reference :class:`~metricbias.datasets.meta_eval.JudgedSet` (index: system):
    the mean sentence BLEU of its summaries (``level="sentence"``, the study's metric) or sacreBLEU's corpus BLEU over
    them (``"corpus"``), case ``kept`` or ``lowercased``, on whitespace (``none``) or ``13a`` tokens."""
    from sacrebleu.metrics import BLEU as SacreBLEU

    from ... import metrics
    from ...metaeval.scoring import hypothesis_scores

    frame = dataset.frame
    lowercase = case == "lowercased"
    if level == "sentence":
        metric = metrics.get("bleu", tokenize=tokens, lowercase=lowercase)
        scores = hypothesis_scores(metric, dataset, cache)["single"]
        return pd.Series(scores, index=frame.index).groupby(frame["system_id"]).mean()
    if level != "corpus":
        raise ValueError(f"level={level!r} is not one of ['sentence', 'corpus']")
    bleu = SacreBLEU(tokenize=tokens, lowercase=lowercase, force=True)
    refs = frame["references"].str[0]
    return pd.Series({system: bleu.corpus_score(list(g["hypothesis"]), [list(refs[g.index])]).score / 100
                      for system, g in frame.groupby("system_id")})


def bleu_variants(dataset, paper: pd.DataFrame, *, cache=None) -> pd.DataFrame:
    """Every :data:`BLEU_VARIANTS` setting's system-level Spearman with the set's human score, before (``origin``)
    and after (``swap``) swapping gender, our 95% interval of ``origin`` over the systems
    (:func:`metricbias.bias.claims.spearman_interval`), Table 7's BLEU row (``paper``: :func:`.gao2022.table7`),
    ``difference`` (ours − paper, origin) and ``paper_inside`` (Table 7's value lies in our interval)."""
    from ...bias.claims import spearman_interval
    from ...metaeval.correlation import spearman

    aspect = dataset.aspects[0]
    row = paper.set_index("paper_metric").loc["BLEU"]
    rows = []
    for label, (level, case, tokens) in BLEU_VARIANTS.items():
        values = {}
        for condition, data in (("origin", dataset), ("swap", dataset.swapped())):
            human = system_human(data, aspect)
            per_system = system_bleu(data, level, case, tokens, cache=cache)
            values[condition] = spearman(per_system[human.index], human, f"BLEU ({label})").value
        low, high = spearman_interval(values["origin"], len(human))
        rows.append({"variant": label, "level": level, "case": case, "tokens": tokens, **values, "n_systems": len(human),
                     "ci_low": low, "ci_high": high, "paper_origin": float(row["origin"]),
                     "paper_swap": float(row["swap"])})
    out = pd.DataFrame(rows)
    out["difference"] = out["origin"] - out["paper_origin"]
    out["paper_inside"] = (out["ci_low"] <= out["paper_origin"]) & (out["paper_origin"] <= out["ci_high"])
    return out


def system_human(data, aspect: str) -> pd.Series:
    """The human score ``aspect`` of a :class:`~metricbias.datasets.meta_eval.JudgedSet` averaged per system."""
    return pd.Series(data.human(aspect), index=data.frame.index).groupby(data.frame["system_id"]).mean()


#: NLTK METEOR settings without WordNet synonyms (the study's METEOR adds them): label -> (Porter stems, tokens as a
#: ``set``, as Sun et al.'s code passed them, instead of in order)
METEOR_VARIANTS: dict[str, tuple[bool, bool]] = {
    "exact matches, tokens in order": (False, False),
    "exact and stem matches, tokens in order": (True, False),
    "exact matches, set of tokens": (False, True),
    "exact and stem matches, set of tokens": (True, True),
}


class _NoSynonyms:
    """A WordNet stand-in with no synsets, so NLTK's METEOR matches no synonyms."""

    @staticmethod
    def synsets(*_args, **_kwargs):
        return []


class _NoStems:
    """A stemmer that keeps every word, so NLTK's METEOR matches no stems beyond exact words."""

    @staticmethod
    def stem(word):
        return word


def meteor_variant_scores(hypotheses, references, stems: bool, as_set: bool) -> np.ndarray:
    """NLTK's METEOR (default parameters, lowercased whitespace tokens, no WordNet synonyms) of each hypothesis
    against its one reference, with or without Porter stem matches, on the tokens in order or as a sorted set."""
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import single_meteor_score

    def tokens(text: str) -> list[str]:
        words = text.lower().split()
        return sorted(set(words)) if as_set else words

    stemmer = PorterStemmer() if stems else _NoStems()
    return np.array([single_meteor_score(tokens(r), tokens(h), wordnet=_NoSynonyms(), stemmer=stemmer)
                     for h, r in zip(hypotheses, references)])


def meteor_variants(dataset, paper: pd.DataFrame) -> pd.DataFrame:
    """Every :data:`METEOR_VARIANTS` setting's system-level Spearman with the set's human score on the original
    data (``origin``), our 95% interval over the systems (:func:`metricbias.bias.claims.spearman_interval`), Table 7's
    METEOR (``paper_origin``: :func:`.gao2022.table7`) and ``paper_inside`` (Table 7's value lies in our interval)."""
    from ...bias.claims import spearman_interval
    from ...metaeval.correlation import spearman

    human = system_human(dataset, dataset.aspects[0])
    value = float(paper.set_index("paper_metric").loc["METEOR", "origin"])
    frame = dataset.frame
    rows = []
    for label, (stems, as_set) in METEOR_VARIANTS.items():
        scores = meteor_variant_scores(frame["hypothesis"], frame["references"].str[0], stems, as_set)
        per_system = pd.Series(scores, index=frame.index).groupby(frame["system_id"]).mean()
        rho = spearman(per_system[human.index], human, f"METEOR ({label})").value
        low, high = spearman_interval(rho, len(human))
        rows.append({"variant": label, "origin": rho, "n_systems": len(human), "ci_low": low, "ci_high": high,
                     "paper_origin": value, "paper_inside": bool(low <= value <= high)})
    return pd.DataFrame(rows)


def meteor_findings(variants: pd.DataFrame) -> dict:
    """What the page says of :func:`meteor_variants`: the lowest and highest correlation over the settings (``low``,
    ``high``) and for how many of the ``settings`` Table 7's value lies inside our interval (``inside``)."""
    return {"low": float(variants["origin"].min()), "high": float(variants["origin"].max()),
            "inside": int(variants["paper_inside"].sum()), "settings": len(variants)}


def nearest(variants: pd.DataFrame) -> pd.Series:
    """The :func:`bleu_variants` row nearest Table 7's value on the original data."""
    return variants.loc[variants["difference"].abs().idxmin()]


def bleu_findings(variants: pd.DataFrame) -> dict:
    """What the page says of :func:`bleu_variants`: Table 7's value (``paper``), the study's own (``ours``), the
    lowest and highest over every setting (``low``, ``high``), the lowercased corpus BLEU's lowest and highest over the
    tokenizers (``corpus_low``, ``corpus_high``) and whether Table 7's value lies between them (``bracketed``:
    "between" or "outside"), and the nearest setting (``nearest``, its ``nearest_value``, ``nearest_difference``)."""
    corpus = variants[(variants["level"] == "corpus") & (variants["case"] == "lowercased")]["origin"]
    paper = float(variants["paper_origin"].iloc[0])
    near = nearest(variants)
    return {"paper": paper, "ours": float(variants.set_index("variant").loc[STUDY_VARIANT, "origin"]),
            "low": float(variants["origin"].min()), "high": float(variants["origin"].max()),
            "corpus_low": float(corpus.min()), "corpus_high": float(corpus.max()),
            "bracketed": "between" if corpus.min() <= paper <= corpus.max() else "outside",
            "nearest": near["variant"], "nearest_value": float(near["origin"]),
            "nearest_difference": float(near["difference"])}


def table7_row(t7: pd.DataFrame, paper_metric: str) -> dict:
    """One row of a Table 7 comparison (:func:`.gao2022.side_by_side`) by the paper's metric name: Table 7's value
    (``paper``) and ours (``ours``) on the original data, NaN where the row is missing."""
    rows = t7[t7["paper_metric"] == paper_metric]
    if rows.empty:
        return {"paper": float("nan"), "ours": float("nan")}
    return {"paper": float(rows["paper_origin"].iloc[0]), "ours": float(rows["ours_origin"].iloc[0])}


def with_nearest_bleu(t7: pd.DataFrame, variants: pd.DataFrame) -> pd.DataFrame:
    """A Table 7 comparison (:func:`.gao2022.side_by_side`) with a second BLEU row right after the first: the
    :func:`bleu_variants` setting nearest Table 7, our metric label naming the setting."""
    near = nearest(variants)
    at = int(np.flatnonzero(t7["paper_metric"].to_numpy() == "BLEU")[0])
    row = t7.iloc[[at]].copy()
    row["metric"] = f"BLEU ({near['variant'].replace('BLEU ', '')})"
    row["ours_origin"], row["ours_swap"] = near["origin"], near["swap"]
    row["diff_origin"], row["diff_swap"] = near["origin"] - near["paper_origin"], near["swap"] - near["paper_swap"]
    return pd.concat([t7.iloc[:at + 1], row, t7.iloc[at + 1:]], ignore_index=True)


def capitalised_share(texts) -> float:
    """The share of a set's words written with a capital where a sentence does not begin (whitespace tokens that
    start with a letter, after the first word and after a full stop, question or exclamation mark): names kept in
    their case."""
    inside = capital = 0
    for text in texts:
        words = text.split()
        for before, word in zip(words, words[1:]):
            if before in (".", "!", "?") or before[-1:] in (".", "!", "?") or not word[:1].isalpha():
                continue
            inside += 1
            capital += word[0].isupper()
    return capital / inside if inside else float("nan")


def vector_share(metric, texts) -> float:
    """The share of the word tokens of ``texts`` (the metric's ``\\w+`` tokens) for which a static-embedding
    ``metric`` finds a vector (its case policy applied)."""
    from ...metrics.embedding import _TOKEN

    total = found = 0
    for text in dict.fromkeys(texts):
        total += len(_TOKEN.findall(text))
        found += len(metric.tokens(text))
    return found / total if total else float("nan")


#: the static-embedding metrics Gao & Wan ran with nlg-eval
NLGEVAL_METRICS = ("embedding_average", "vector_extrema", "greedy_matching")


def nlgeval_scores(metric, candidates, references) -> np.ndarray:
    """Scores of a static-embedding ``metric`` (one of :data:`NLGEVAL_METRICS`) on its own vectors, with nlg-eval's
    handling of words instead of ours: whitespace tokens, looked up as written, and a word without a vector given
    the mean of all vectors (ours: ``\\w+`` tokens, a lowercase fallback, such words skipped)."""
    from ... import backbones
    from ...metrics.embedding import extrema, load_vectors

    if metric.name not in NLGEVAL_METRICS:
        raise ValueError(f"metric {metric.name!r} is not one of {list(NLGEVAL_METRICS)}")
    kv = load_vectors(str(backbones.resolve(metric.options["backbone"])))
    table, vocab, unknown = kv.vectors, kv.key_to_index, kv.vectors.mean(axis=0)

    def vectors(text):
        rows = [table[vocab[w]] if w in vocab else unknown for w in text.split()]
        return np.array(rows) if rows else np.zeros((1, table.shape[1]))

    def cosine(a, b):
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        return float(a @ b / (na * nb)) if na and nb else 0.0

    out = []
    for c, r in zip(candidates, references):
        vc, vr = vectors(c), vectors(r)
        if metric.name == "embedding_average":
            out.append(cosine(vc.mean(axis=0), vr.mean(axis=0)))
        elif metric.name == "vector_extrema":
            out.append(cosine(extrema(vc), extrema(vr)))
        else:
            unit_c = vc / np.maximum(np.linalg.norm(vc, axis=1), 1e-12)[:, None]
            unit_r = vr / np.maximum(np.linalg.norm(vr, axis=1), 1e-12)[:, None]
            sim = unit_c @ unit_r.T
            out.append(float((sim.max(axis=0).mean() + sim.max(axis=1).mean()) / 2))
    return np.array(out)


def nlgeval_variant(dataset, scorers, paper: pd.DataFrame) -> pd.DataFrame:
    """For each of ``scorers`` (``(label, metric)``) among :data:`NLGEVAL_METRICS`: the system-level Spearman with
    the set's human score under :func:`nlgeval_scores` (``nlgeval``), Table 7's value (``paper``: :func:`.gao2022.table7`)
    and the difference; a single-reference set."""
    from ...metaeval.correlation import system_level

    frame = dataset.frame
    human = dataset.human(dataset.aspects[0])
    published = paper.set_index("name")["origin"]
    rows = []
    for label, metric in scorers:
        if metric.name not in NLGEVAL_METRICS:
            continue
        scores = nlgeval_scores(metric, frame["hypothesis"], frame["references"].str[0])
        rho = system_level(frame["system_id"], scores, human, f"{label} with nlg-eval's handling").value
        rows.append({"metric": label, "name": metric.name, "nlgeval": rho, "paper": float(published[metric.name]),
                     "difference": rho - float(published[metric.name])})
    return pd.DataFrame(rows, columns=["metric", "name", "nlgeval", "paper", "difference"])


def nlgeval_findings(variant: pd.DataFrame, close: float = 0.03) -> dict:
    """What the page says of :func:`nlgeval_variant`: per name of :data:`NLGEVAL_METRICS` its value (``<name>``,
    NaN where it did not run) and Table 7's (``<name>_paper``), and which metrics come within ``close`` of Table 7
    (``near``) and which do not (``far``; labels, or "none")."""
    near = variant["difference"].abs() <= close + 1e-9
    out = {"close": close, "near": ", ".join(variant.loc[near, "metric"]) or "none",
           "far": ", ".join(variant.loc[~near, "metric"]) or "none"}
    out.update({key: float("nan") for name in NLGEVAL_METRICS for key in (name, f"{name}_paper")})
    for r in variant.to_dict("records"):
        out.update({r["name"]: float(r["nlgeval"]), f"{r['name']}_paper": r["paper"]})
    return out


def partial_spearman(x, y, control) -> dict:
    """Spearman's partial correlation of ``x`` and ``y`` controlling for ``control``: the Pearson correlation of the
    residuals of their ranks regressed on the ranks of ``control`` (``rho``), with its two-sided p from Student's t on
    n − 3 degrees of freedom and the 95% interval of :func:`metricbias.bias.claims.spearman_interval` on n − 1."""
    from scipy import stats

    from ...bias.claims import spearman_interval

    rx, ry, rc = (stats.rankdata(np.asarray(v, dtype=float)) for v in (x, y, control))
    design = np.column_stack([np.ones_like(rc), rc])
    residual = [r - design @ np.linalg.lstsq(design, r, rcond=None)[0] for r in (rx, ry)]
    n = len(rx)
    rho = float(stats.pearsonr(*residual).statistic)
    t = rho * np.sqrt((n - 3) / max(1 - rho ** 2, 1e-300))
    low, high = spearman_interval(rho, n - 1)
    return {"rho": rho, "p": float(2 * stats.t.sf(abs(t), n - 3)), "ci_low": low, "ci_high": high, "n": n}


def length_check(dataset, scorers, name: str = "meteor", *, cache=None) -> dict:
    """Does summary length drive a metric's system-level correlation? Per system of ``dataset``: the mean length of
    its summaries in words, the mean human score and the mean score of the ``scorers`` metric registered as ``name``.
    Spearman of length with the human score (``length_human``, ``length_human_p``) and with the metric
    (``metric_length``, ``metric_length_p``), the metric's own (``metric_human``), and its partial correlation with
    the human score controlling for length (``partial``, ``partial_p``, ``partial_ci_low``, ``partial_ci_high``:
    :func:`partial_spearman`) and ``partial_verdict`` (it "stays above 0", "falls below 0" or "is not
    distinguishable from 0" by that interval); ``systems``. NaN values where the metric is not among ``scorers``."""
    from scipy import stats

    from ...metaeval.scoring import hypothesis_scores

    found = next((m for _, m in scorers if m.name == name), None)
    human = system_human(dataset, dataset.aspects[0])
    frame = dataset.frame
    length = frame["hypothesis"].str.split().str.len().groupby(frame["system_id"]).mean()[human.index]
    lh = stats.spearmanr(length, human)
    out = {"systems": len(human), "length_human": float(lh.statistic), "length_human_p": float(lh.pvalue)}
    if found is None:
        return {**out, **dict.fromkeys(("metric_length", "metric_length_p", "metric_human", "partial", "partial_p",
                                        "partial_ci_low", "partial_ci_high"), np.nan), "partial_verdict": "not computed"}
    scores = next(iter(hypothesis_scores(found, dataset, cache).values()))
    metric = pd.Series(scores, index=frame.index).groupby(frame["system_id"]).mean()[human.index]
    ml = stats.spearmanr(metric, length)
    partial = partial_spearman(metric, human, length)
    return {**out, "metric_length": float(ml.statistic), "metric_length_p": float(ml.pvalue),
            "metric_human": float(stats.spearmanr(metric, human).statistic), "partial": partial["rho"],
            "partial_p": partial["p"], "partial_ci_low": partial["ci_low"], "partial_ci_high": partial["ci_high"],
            "partial_verdict": "stays above 0" if partial["ci_low"] > 0 else "falls below 0"
            if partial["ci_high"] < 0 else "is not distinguishable from 0"}
