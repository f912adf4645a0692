"""Chapter 2: the built datasets beside the released ones (sizes, references, wording), the bias
of the reference metrics on each, and the chapter's headline numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import datasets
from ...bias import pairwise
from ...datasets import published
from ...datasets.published import ATTRIBUTES
from .ch1_published import P
from .ch2_summary import long_texts
from .sun2022 import RELEASED_SETTINGS
from .tables import table


#: released column -> registry name of the n-gram metrics chapter 2 scores both references with
REFERENCE_METRICS = {column: RELEASED_SETTINGS[column][0] for column in ("BLEU", "ROUGE", "chrF")}


def released_attributes(attributes=None) -> list[str]:
    """The released attributes among ``attributes`` (a list, a comma-separated string, or None for all), in the
    paper's order; all six when the selection names none of them (a new attribute only), so that the comparisons
    with the paper keep their reference point."""
    if isinstance(attributes, str):
        attributes = [a.strip() for a in attributes.split(",") if a.strip()]
    chosen = [a for a in ATTRIBUTES if attributes is None or a in attributes]
    return chosen or list(ATTRIBUTES)


def built_sizes(summary: pd.DataFrame) -> pd.DataFrame:
    """Per built attribute (``built.build()``'s summary): pairs and exclusions beside Table 3 and the release."""
    released = published.pairs().groupby("attribute").size()
    t3 = table("sun2022_table3_sizes").set_index("attribute")["sample_pairs"]
    attrs = summary["attribute"]
    return pd.DataFrame({"attribute": attrs, "source": summary["source"], "pairs": summary["pairs"],
                         "excluded": summary["excluded"],
                         "pairs" + P: attrs.map(t3).astype("Int64"), "released pairs": attrs.map(released).astype("Int64")})


#: how a page names the raw sources of the built datasets
SOURCE_NAMES = {"winobias": "WinoBias", "crows_pairs": "CrowS-Pairs", "stereoset": "StereoSet"}


#: the source of a built attribute that shares its name with another source's, as its page name shows it
_ATTRIBUTE_SOURCES = {"_crows": "CrowS-Pairs", "stereoset_": "StereoSet"}


def attribute_words(attribute: str) -> str:
    """An attribute as a page names it: "physical_appearance" -> "physical appearance", "gender_crows" -> "gender
    (CrowS-Pairs)", "stereoset_race" -> "race (StereoSet)"."""
    attribute = str(attribute)
    for affix, source in _ATTRIBUTE_SOURCES.items():
        if attribute.startswith(affix) or attribute.endswith(affix):
            bare = attribute.removeprefix(affix) if affix.endswith("_") else attribute.removesuffix(affix)
            return f"{bare.replace('_', ' ')} ({source})"
    return attribute.replace("_", " ")


def in_words(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a page shows it: attribute names in words (``physical_appearance`` -> "physical appearance")
    and sources by their names (:data:`SOURCE_NAMES`), in whichever of the columns ``attribute``, ``source`` and
    ``example`` (a label such as "crows_pairs, drop, race") it has."""
    out = frame.copy()
    if "attribute" in out:
        out["attribute"] = out["attribute"].astype(str).map(attribute_words)
    if "source" in out:
        out["source"] = out["source"].map(lambda s: SOURCE_NAMES.get(s, s))
    if "example" in out:
        def words(text: str) -> str:
            for key, name in SOURCE_NAMES.items():
                text = text.replace(key, name)
            return text.replace("_", " ")

        out["example"] = out["example"].astype(str).map(words)
    return out


def crows_subset(sizes: pd.DataFrame, attribute: str = "race") -> dict:
    """How the built CrowS-Pairs attributes compare with Table 3: the attribute's released pairs and its source
    pairs (built plus excluded), and which attributes we build more / fewer pairs of than the paper kept."""
    crows = sizes[(sizes["source"] == "crows_pairs") & sizes["pairs" + P].notna()].set_index("attribute")
    row = crows.loc[attribute] if attribute in crows.index else None
    return {"attribute": attribute,
            "released": int(row["released pairs"]) if row is not None else float("nan"),
            "source_pairs": int(row["pairs"] + row["excluded"]) if row is not None else float("nan"),
            "larger": ", ".join(crows.index[crows["pairs"] > crows["pairs" + P]]).replace("_", " ") or "none",
            "smaller": ", ".join(crows.index[crows["pairs"] < crows["pairs" + P]]).replace("_", " ") or "none"}


def released_match(match: pd.DataFrame, attributes=ATTRIBUTES) -> pd.DataFrame:
    """Per released attribute: how its pairs fared in the build (``built.match_published()``), the share of all its
    released references rebuilt byte for byte and up to case and punctuation (a pair not built counts as not
    rebuilt, as in :func:`gender_references`), and the mean token edit distance of the built ones."""
    status = match.groupby(["attribute", "status"]).size().unstack(fill_value=0)
    status = status.reindex(columns=["built", "excluded", "not_in_source"], fill_value=0)
    rates = match.groupby("attribute").agg(exact=("exact", "mean"), normalized=("same_normalized", "mean"))
    distance = match[match["status"] == "built"].groupby("attribute")["token_edit_distance"].agg(
        lambda d: float(d.astype(float).mean())).rename("distance")
    out = status.join(rates).join(distance).reindex([a for a in attributes if a in status.index])
    return pd.DataFrame({"attribute": out.index, "built": out["built"].to_numpy(),
                         "excluded": out["excluded"].to_numpy(), "not in source": out["not_in_source"].to_numpy(),
                         "rebuilt byte for byte": out["exact"].to_numpy(),
                         "rebuilt up to case and punctuation": out["normalized"].to_numpy(),
                         "token edit distance (mean)": out["distance"].to_numpy()})


def gender_references(match: pd.DataFrame) -> dict:
    """How many released gender references the build reproduces byte for byte, and up to case and punctuation;
    how many it does not build, and how many differ only in case or in a possessive 's."""
    g = match[match["attribute"] == "gender"]
    n = len(g)
    return {"released": n, "exact": int(g["exact"].sum()), "exact_rate": float(g["exact"].mean()) if n else float("nan"),
            "normalized": int(g["same_normalized"].sum()),
            "normalized_rate": float(g["same_normalized"].mean()) if n else float("nan"),
            "not_built": int((g["status"] != "built").sum()),
            **{kind: int((g["difference"] == kind).sum()) for kind in ("case", "possessive")}}


def reference_differences(match: pd.DataFrame, attribute: str = "gender") -> pd.DataFrame:
    """Released references of one attribute that differ from ours, by how (``not built: <reason>`` when excluded)."""
    g = match[(match["attribute"] == attribute) & ~match["exact"]]
    how = g["difference"].where(g["status"] == "built", "not built: " + g["reason"])
    return how.value_counts().sort_index().rename_axis("difference").rename("pairs").reset_index()


def reference_difference_examples(match: pd.DataFrame, attribute: str = "gender", per_kind: int = 2) -> pd.DataFrame:
    """The first ``per_kind`` built pairs of each kind of reference difference: our reference and the released one."""
    g = match[(match["attribute"] == attribute) & ~match["exact"] & (match["status"] == "built")]
    g = g.groupby("difference").head(per_kind)
    return pd.DataFrame({"difference": g["difference"].to_numpy(), "built reference": g["reference"].to_numpy(),
                         "released reference": g["published_reference"].to_numpy()})


def edit_distances(match: pd.DataFrame, cap: int = 6) -> pd.DataFrame:
    """Built CrowS-Pairs pairs per attribute and token edit distance between the references (``cap`` = cap or more)."""
    crows = match[(match["attribute"] != "gender") & (match["status"] == "built")]
    distance = crows["token_edit_distance"].astype(int).clip(upper=cap)
    counts = crows.assign(distance=distance).groupby(["attribute", "distance"], sort=False).size()
    return counts.rename("pairs").reset_index()


def difference_kinds(match: pd.DataFrame) -> pd.DataFrame:
    """Built CrowS-Pairs pairs per attribute (rows) and kind of reference difference (columns)."""
    crows = match[(match["attribute"] != "gender") & (match["status"] == "built")]
    return crows.groupby(["attribute", "difference"]).size().unstack(fill_value=0).rename_axis(columns=None
                                                                                               ).reset_index()


def wording_examples(match: pd.DataFrame, per_attribute: int = 3, seed: int = 0) -> pd.DataFrame:
    """Random CrowS-Pairs pairs whose references differ in wording: the candidate, our reference and the released."""
    crows = match[(match["attribute"] != "gender") & (match["status"] == "built") & (match["difference"] == "wording")]
    picked = crows.sample(frac=1, random_state=seed).groupby("attribute").head(per_attribute)
    return long_texts(picked, {"candidate_1": "candidate 1", "reference": "built reference",
                               "published_reference": "released reference"}, keys=("attribute",))


def not_in_source(match: pd.DataFrame) -> pd.DataFrame:
    """Released pairs that no raw pair has (the release edited the source sentence)."""
    return match.loc[match["status"] == "not_in_source", ["attribute", "candidate_1", "candidate_2"]
                     ].reset_index(drop=True)


def released_exclusions(match: pd.DataFrame) -> pd.DataFrame:
    """Released pairs that the rules exclude, per reason (rows) and attribute (columns)."""
    ex = match[match["status"] == "excluded"]
    return ex.groupby(["reason", "attribute"]).size().unstack(fill_value=0).rename_axis(columns=None).reset_index()


def reference_bias(attributes=None, *, n_resamples: int = 9999, seed: int = 0, cache=True) -> pd.DataFrame:
    """Bias (Eq. 2) of BLEU, ROUGE-1 and chrF on the released pairs that chapter 2 also builds, three ways.

    ``dataset`` is ``built`` (both candidates against the built reference), ``released`` (each candidate
    against its own released reference, scored here) or ``released scores`` (the released score columns of
    the same pairs). Eq. 1 rescales over these shared pairs, so the values are not Table 6's.
    ``metric`` is the released column's name (BLEU, ROUGE, chrF).
    """
    from ...scoring import score_metrics

    names = {v: k for k, v in REFERENCE_METRICS.items()}
    shared = score_metrics(datasets.load("matched", released_attributes(attributes)), list(names), cache=cache,
                           progress=False)
    parts = [pairwise.bias_table(part, n_resamples=n_resamples, seed=seed).assign(dataset=dataset)
             for dataset, part in shared.groupby("dataset")]
    ids = shared.loc[shared["dataset"] == "released", ["attribute", "pair_id"]].drop_duplicates()
    columns = published.scores(sorted(ids["attribute"].unique()), list(REFERENCE_METRICS))
    columns = columns[columns["pair_id"].isin(ids["pair_id"])]
    parts.append(pairwise.bias_table(columns, n_resamples=n_resamples, seed=seed).assign(dataset="released scores"))
    out = pd.concat(parts, ignore_index=True)
    out["metric"] = out["metric"].replace(names)
    return out[["dataset", *pairwise.BIAS_COLUMNS]]


#: chapter 2's equivalence margin, fixed before the comparison: built and released references "measure the same
#: bias" when the paired difference of Eq. 2 is shown to lie within ±1 point (of 100)
REFERENCE_MARGIN = 1.0


def reference_bias_tests(attributes=None, *, margin: float = REFERENCE_MARGIN, n_resamples: int = 9999,
                         seed: int = 0, cache=True) -> pd.DataFrame:
    """Built against released references, per (metric, attribute) of :func:`reference_bias`: the per-pair Eq. 2
    terms of the same pairs (each version rescaled by its own Eq. 1), their paired difference built − released with
    its 95% bootstrap interval, and two one-sided tests against ``margin`` (:func:`metricbias.bias.claims.compare`).
    Columns: ``metric, attribute, pairs, difference, ci_low, ci_high, tost_low, tost_high, margin, equivalent,
    verdict``."""
    from ...bias import claims
    from ...bias.significance import pair_terms
    from ...scoring import score_metrics

    names = {v: k for k, v in REFERENCE_METRICS.items()}
    shared = score_metrics(datasets.load("matched", released_attributes(attributes)), list(names), cache=cache,
                           progress=False)
    rows = []
    for (metric, attribute), g in shared.groupby(["metric", "attribute"], sort=False):
        built = g[g["dataset"] == "built"].set_index("pair_id")
        released = g[g["dataset"] == "released"].set_index("pair_id").loc[built.index]
        label = names.get(metric, metric)
        tb, tr = (pair_terms(d["score_1"], d["score_2"], metric=label, attribute=attribute) for d in (built, released))
        if np.isnan(tb).any() or np.isnan(tr).any():  # constant scores: Eq. 1 undefined
            c = {"difference": np.nan, "ci_low": np.nan, "ci_high": np.nan, "tost_low": np.nan, "tost_high": np.nan,
                 "margin": margin, "verdict": "undefined (constant scores)"}
        else:
            c = claims.compare(tb, tr, paired=True, margin=margin, n_resamples=n_resamples, seed=seed)
        rows.append({"metric": label, "attribute": attribute, "pairs": len(built),
                     **{k: c.get(k, False) for k in ("difference", "ci_low", "ci_high", "tost_low", "tost_high",
                                                     "margin", "equivalent", "verdict")}})
    return pd.DataFrame(rows)


def reference_bias_table(by_dataset: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """:func:`reference_bias` side by side per (metric, attribute): built and released bias, their paired difference
    with its 95% interval and the verdict of :func:`reference_bias_tests`, and the bias of the released score
    columns."""
    wide = by_dataset.pivot_table(index=["metric", "attribute"], columns="dataset",
                                  values=["bias", "n_pairs"], sort=False)
    b, r = wide.xs("built", axis=1, level=1), wide.xs("released", axis=1, level=1)
    out = pd.DataFrame({"metric": wide.index.get_level_values(0), "attribute": wide.index.get_level_values(1),
                        "pairs": b["n_pairs"].astype(int).to_numpy(), "built": b["bias"].to_numpy(),
                        "released": r["bias"].to_numpy(), "built − released": (b["bias"] - r["bias"]).to_numpy(),
                        "released scores": wide[("bias", "released scores")].to_numpy()})
    t = tests.rename(columns={"ci_low": "CI low", "ci_high": "CI high"})
    # a difference shown and still inside the margin says both, so the table and the text count the same cells
    both = t["verdict"].isin(["higher", "lower"]) & t.get("equivalent", pd.Series(False, index=t.index)).astype(bool)
    margin = t["margin"].iloc[0] if "margin" in t and len(t) else REFERENCE_MARGIN
    t = t.assign(verdict=t["verdict"].where(~both, t["verdict"] + f", within ±{margin:g}"))[
        ["metric", "attribute", "CI low", "CI high", "verdict"]]
    out = out.merge(t, on=["metric", "attribute"], how="left")
    return out[["metric", "attribute", "pairs", "built", "released", "built − released", "CI low", "CI high",
                "verdict", "released scores"]]


def reference_bias_summary(by_dataset: pd.DataFrame, tests: pd.DataFrame) -> dict:
    """Does the choice of reference change the measured bias? Numbers of :func:`reference_bias_table`: cells shown
    the same within the margin (``same``), shown to differ (``differ``), and neither (``undecided``)."""
    from ...bias.claims import UNDECIDED

    cmp = reference_bias_table(by_dataset, tests)
    k = int(cmp["built − released"].abs().idxmax())
    verdict = cmp["verdict"].fillna("")
    return {"cells": len(cmp), "margin": float(tests["margin"].iloc[0]) if len(tests) else REFERENCE_MARGIN,
            "same": int(verdict.str.startswith("same within").sum()),
            "differ": int(verdict.str.startswith(("higher", "lower")).sum()),
            "undecided": int((verdict == UNDECIDED).sum()),
            "differ_within_margin": int((tests["verdict"].isin(["higher", "lower"])
                                         & tests.get("equivalent", pd.Series(False, index=tests.index)).astype(bool)
                                         ).sum()),
            "differ_cells": ", ".join(f"{m} on {attribute_words(a)}" for m, a in cmp.loc[
                verdict.str.startswith(("higher", "lower")), ["metric", "attribute"]].to_numpy()) or "none",
            "scores_reproduced_within": float((cmp["released"] - cmp["released scores"]).abs().max()),
            "largest_difference": float(abs(cmp.loc[k, "built − released"])),
            "largest_difference_cell": f"{cmp.loc[k, 'metric']} on {attribute_words(cmp.loc[k, 'attribute'])}"}


def minimal_pairs(by_dataset: pd.DataFrame, *, n_resamples: int = 9999, seed: int = 0) -> dict:
    """Released-score bias of BLEU, ROUGE and chrF on every released gender pair and on the shared (minimal) ones.

    Keys ``<metric>_all`` and ``<metric>_shared`` (metric lower-cased), ``pairs_all``, ``pairs_shared``,
    ``left_out`` and ``word_level_zero`` (BLEU and ROUGE are 0 on the shared pairs).
    """
    shared = by_dataset[(by_dataset["dataset"] == "released scores") & (by_dataset["attribute"] == "gender")]
    if shared.empty:  # gender not among the attributes compared
        nan = float("nan")
        return {"pairs_all": nan, "pairs_shared": nan, "left_out": nan, "word_level_zero": False,
                **{f"{m.lower()}_{k}": nan for m in REFERENCE_METRICS for k in ("all", "shared")}}
    everything = pairwise.bias_table(published.scores(["gender"], list(REFERENCE_METRICS)), n_resamples=n_resamples,
                                     seed=seed).set_index("metric")
    shared = shared.set_index("metric")
    out = {"pairs_all": int(everything["n_pairs"].iloc[0]), "pairs_shared": int(shared["n_pairs"].iloc[0])}
    out["left_out"] = out["pairs_all"] - out["pairs_shared"]
    for metric in REFERENCE_METRICS:
        out[f"{metric.lower()}_all"] = float(everything.loc[metric, "bias"])
        out[f"{metric.lower()}_shared"] = float(shared.loc[metric, "bias"])
    out["word_level_zero"] = out["bleu_shared"] == 0 and out["rouge_shared"] == 0
    return out


def datasets_summary(attributes=None, *, n_resamples: int = 9999, seed: int = 0, by_dataset=None,
                     tests=None) -> dict:
    """Chapter 2's headline numbers: what the rules build, how close the gender references come to the released
    ones, and whether the choice of reference changes the measured bias (``by_dataset``: :func:`reference_bias`,
    ``tests``: :func:`reference_bias_tests`)."""
    from ...datasets import built

    pairs, excluded = built.load(attributes), built.exclusions(attributes)
    match = built.match_published(released_attributes(attributes))
    by_dataset = reference_bias(attributes, n_resamples=n_resamples, seed=seed) if by_dataset is None else by_dataset
    tests = reference_bias_tests(attributes, n_resamples=n_resamples, seed=seed) if tests is None else tests
    gender = gender_references(match)
    bias = reference_bias_summary(by_dataset, tests)
    return {"attributes": int(pairs["attribute"].nunique()), "pairs": len(pairs), "exclusions": len(excluded),
            "gender_released": gender["released"], "gender_exact": gender["exact"],
            "gender_exact_rate": gender["exact_rate"], "gender_normalized_rate": gender["normalized_rate"],
            "bias_cells": bias["cells"], "bias_cells_same": bias["same"], "bias_cells_differ": bias["differ"],
            "bias_largest_difference": bias["largest_difference"]}
