"""Chapter 2: summaries of the built paired datasets, as the chapters show them (chapter 3's token counts too).

Every function takes the frames of :mod:`metricbias.datasets.built` (``load()``: the pair layout,
``exclusions()``) or a pair table and returns a small table: what was built, what
was left out and why, how the references were made, and examples in long form
(one text per row, so that a page can show whole sentences).
"""

from __future__ import annotations

import difflib

import pandas as pd

from ...datasets import checks
from ...datasets.built import REASONS


def winobias_subsets(pairs: pd.DataFrame, attribute: str = "gender") -> dict[str, int]:
    """Built pairs of a WinoBias attribute per source file, keyed ``type1_dev`` ... (from the pairs' ``source_id``)."""
    ids = pairs.loc[pairs["attribute"] == attribute, "source_id"]
    counts = ids.str.split(":").str[0].value_counts().sort_index()
    return {k.replace(".", "_"): int(v) for k, v in counts.items()}


def exclusion_reasons(excluded: pd.DataFrame) -> pd.DataFrame:
    """One row per (source, reason) that occurs: what it means and how many pairs it excludes (most first)."""
    counts = excluded.groupby(["source", "reason"], sort=False).size().rename("pairs").reset_index()
    counts["meaning"] = [REASONS.get(src, {}).get(reason, "") for src, reason in zip(counts["source"],
                                                                                    counts["reason"])]
    order = {s: i for i, s in enumerate(REASONS)}
    counts = counts.assign(rank=counts["source"].map(order)).sort_values(["rank", "pairs"], ascending=[True, False],
                                                                         kind="stable")
    return counts[["source", "reason", "meaning", "pairs"]].reset_index(drop=True)


def exclusion_grid(excluded: pd.DataFrame, attributes) -> pd.DataFrame:
    """Excluded pairs per attribute (rows, in ``attributes`` order) and reason (columns), with a total."""
    grid = excluded.groupby(["attribute", "reason"]).size().unstack(fill_value=0)
    grid = grid.reindex([a for a in attributes if a in grid.index])
    grid["total"] = grid.sum(axis=1)
    return grid.rename_axis(columns=None).reset_index()


def exclusion_examples(excluded: pd.DataFrame, per_reason: int = 2, source: str = "crows_pairs") -> pd.DataFrame:
    """The first ``per_reason`` exclusions of each reason of one source: reason, attribute and the span at fault."""
    part = excluded[excluded["source"] == source].groupby("reason").head(per_reason)
    return part.sort_values("reason", kind="stable")[["reason", "attribute", "detail"]].reset_index(drop=True)


def reference_methods(pairs: pd.DataFrame, attributes) -> pd.DataFrame:
    """Built pairs per attribute (rows, in ``attributes`` order) and reference method (columns)."""
    grid = pairs.groupby(["attribute", "reference_method"]).size().unstack(fill_value=0)
    grid = grid.reindex([a for a in attributes if a in grid.index])
    return grid.rename_axis(columns=None).reset_index()


def long_texts(frame: pd.DataFrame, texts: dict[str, str], keys=()) -> pd.DataFrame:
    """``frame`` with one row per text, so that a page shows whole sentences in one wide column: ``example`` (the
    record's ``keys`` joined by ", ", on its first row only), ``role`` (what the text is, from ``texts``: column ->
    label, where ``{group_1}``-style fields are filled from the record) and the ``sentence`` itself."""
    rows = []
    for record in frame.to_dict("records"):
        for k, (column, label) in enumerate(texts.items()):
            rows.append({"example": ", ".join(str(record[key]) for key in keys) if k == 0 else "",
                         "role": label.format(**record), "sentence": record[column]})
    return pd.DataFrame(rows, columns=["example", "role", "sentence"])


def example_pairs(pairs: pd.DataFrame, per_method: int = 2, seed: int = 0) -> pd.DataFrame:
    """``per_method`` random built pairs of each (source, reference method), in long form (:func:`long_texts`)."""
    picked = (pairs.sample(frac=1, random_state=seed).groupby(["source", "reference_method"]).head(per_method)
              .sort_values(["source", "reference_method"]))
    picked = picked.rename(columns={"reference_method": "method"})
    return long_texts(picked, {"candidate_1": "candidate 1 ({group_1})", "candidate_2": "candidate 2 ({group_2})",
                               "reference_1": "reference"}, keys=("source", "method", "attribute"))


def lexicon_rows(lexicon, n: int | None = None) -> pd.DataFrame:
    """The first ``n`` aligned rows of a lexicon: form, neutral term and each group's terms."""
    rows = [{"form": r.form, "neutral": r.neutral, **{g: ", ".join(r.terms.get(g, ())) for g in lexicon.groups}}
            for r in lexicon.rows[:n]]
    return pd.DataFrame(rows, columns=["form", "neutral", *lexicon.groups])


def counterparts(lexicon, terms, groups) -> pd.DataFrame:
    """For each term, its aligned terms in each group (what a multi-group counterfactual substitutes)."""
    return pd.DataFrame([{"term": t, **{g: ", ".join(lexicon.counterparts(t, g)) for g in groups}} for t in terms],
                        columns=["term", *groups])


def differing_tokens(candidate_1: str, candidate_2: str) -> int:
    """How many whitespace tokens two candidates differ in (the longer side of each differing span)."""
    ops = difflib.SequenceMatcher(a=candidate_1.split(), b=candidate_2.split()).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")


def mean_differing_tokens(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per attribute: pairs and the mean number of tokens the two candidates differ in (:func:`differing_tokens`)."""
    tokens = [differing_tokens(a, b) for a, b in zip(pairs["candidate_1"], pairs["candidate_2"])]
    out = pairs.assign(tokens=tokens).groupby("attribute", sort=False)["tokens"].agg(["size", "mean"])
    return pd.DataFrame({"attribute": out.index, "pairs": out["size"].to_numpy(),
                         "differing tokens (mean)": out["mean"].to_numpy()})


def held_out_report(names) -> pd.DataFrame:
    """What the training data of each trained backbone in ``names`` lost to the held-out evaluation texts, from its
    provenance: ``name, source, unit (pairs or sentences), read, held out (dropped), used``; absent names are skipped."""
    from ... import backbones

    rows = []
    for name in names:
        folder = backbones.trained_path(name)
        if folder is None:
            continue
        for c in backbones.trained_info(folder)["data"].get("counts", []):
            unit = "pairs" if "pairs_read" in c else "sentences"
            rows.append({"name": name, "source": c["source"], "unit": unit, "read": c[f"{unit}_read"],
                         "held out (dropped)": c["dropped_held_out"], "used": c[f"{unit}_used"]})
    return pd.DataFrame(rows, columns=["name", "source", "unit", "read", "held out (dropped)", "used"])


def sample_sizes(sampled: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """Per attribute: the pairs a seeded draw kept (``scored``) of the ``full`` set's (``pairs``); equal when every
    pair is scored."""
    out = pd.DataFrame({"pairs": full.groupby("attribute", sort=False).size()})
    out["scored"] = sampled.groupby("attribute").size().reindex(out.index, fill_value=0)
    return out.rename_axis("attribute").reset_index()


def check_counts(source: pd.DataFrame, source_findings: pd.DataFrame, pairs: pd.DataFrame,
                 built_findings: pd.DataFrame, excluded: pd.DataFrame, attributes) -> pd.DataFrame:
    """Per attribute (rows, in ``attributes`` order): the raw source pairs, how many of them each rule of
    ``datasets.checks`` catches (columns named by rule) and any rule, then the built pairs, those a check left out
    (reason ``check:<rule>``) and those still caught in the built set. ``source``: ``built.source_pairs()``, with
    its findings keyed by ``source_id``; ``built_findings``: ``built.check(pairs)``."""
    attributes = [a for a in attributes if a in set(source["attribute"])]
    caught = checks.count_table(source_findings, attributes).rename(columns={"any": "any rule"})
    out = pd.DataFrame({"attribute": attributes,
                        "source pairs": source.groupby("attribute").size().reindex(attributes).to_numpy()})
    out = pd.concat([out, caught.reset_index(drop=True)], axis=1)
    out["built pairs"] = pairs.groupby("attribute").size().reindex(attributes, fill_value=0).to_numpy()
    dropped = excluded[excluded["reason"].str.startswith("check:")]
    out["left out by a check"] = dropped.groupby("attribute").size().reindex(attributes, fill_value=0).to_numpy()
    out["caught in the built set"] = [built_findings.loc[built_findings["attribute"] == a, "id"].nunique()
                                      for a in attributes]
    return out


def check_exclusions(excluded: pd.DataFrame) -> pd.DataFrame:
    """The pairs a rule check left out of the built sets (reason ``check:<rule>``): attribute, rule, the text and
    words at fault, and both candidates."""
    part = excluded[excluded["reason"].str.startswith("check:")]
    return pd.DataFrame({"attribute": part["attribute"].to_numpy(), "rule": part["reason"].str[6:].to_numpy(),
                         "at fault": part["detail"].to_numpy(), "candidate_1": part["candidate_1"].to_numpy(),
                         "candidate_2": part["candidate_2"].to_numpy()})


def check_totals(counts: pd.DataFrame, excluded: pd.DataFrame) -> dict:
    """Findings for the page's prose from :func:`check_counts`: pairs caught in the sources by any rule and by each
    rule (``source_<rule>``), pairs left out by a check, pairs still caught, and the pairs the CrowS-Pairs builder
    excludes because they contrast another attribute (``other_attribute_excluded``)."""
    out = {"source_pairs": int(counts["source pairs"].sum()), "source_any": int(counts["any rule"].sum()),
           "left_out": int(counts["left out by a check"].sum()), "remaining": int(counts["caught in the built set"].sum())}
    out.update({f"source_{rule}": int(counts[rule].sum()) for rule in checks.RULES})
    out["other_attribute_excluded"] = int((excluded["reason"] == "other_attribute").sum())
    return out


def checked_sets(counterfactual_rows: pd.DataFrame, counterfactual_excluded: pd.DataFrame, swapped: dict) -> pd.DataFrame:
    """The checks on the texts two other builders write: chapter 4's counterfactual candidates (one row per
    attribute) and chapter 7's gender-swapped texts (``swapped``: name -> a ``.swapped()`` meta-evaluation set).
    ``texts``: the texts an edit made (substituted candidates; texts the swap changed); ``caught before the edit``:
    findings in the texts they were made from; ``introduced by the edit``; ``left out by a check``."""
    from ...datasets import counterfactuals
    from ...datasets.meta_eval import swap_findings

    rows = []
    protected = counterfactual_rows[~counterfactual_rows["group"].isin([counterfactuals.ORIGINAL,
                                                                         counterfactuals.NEUTRAL])]
    for attribute, block in protected.groupby("attribute", sort=False):
        originals = counterfactual_rows[(counterfactual_rows["attribute"] == attribute)
                                        & (counterfactual_rows["group"] == counterfactuals.ORIGINAL)]
        first = originals.drop_duplicates("source").set_index("source")["candidate"]  # candidate 1: made from it
        ids = block.index.astype(str)
        new = checks.introduced(checks.check_texts(block["source"].map(first), ids),
                                checks.check_texts(block["candidate"], ids))
        dropped = counterfactual_excluded[(counterfactual_excluded["attribute"] == attribute)
                                          & counterfactual_excluded["reason"].str.startswith("check:")]
        rows.append({"set": f"counterfactual {attribute}", "texts": len(block),
                     "caught before the edit": len(checks.check_texts(first)), "introduced by the edit": len(new),
                     "left out by a check": len(dropped)})
    for name, data in swapped.items():
        before, new = swap_findings(data)
        rows.append({"set": f"{name}, gender-swapped", "texts": len(data.swap_report),
                     "caught before the edit": len(before), "introduced by the edit": len(new),
                     "left out by a check": 0})
    return pd.DataFrame(rows, columns=["set", "texts", "caught before the edit", "introduced by the edit",
                                       "left out by a check"])


__all__ = ["check_counts", "check_exclusions", "check_totals", "checked_sets", "counterparts", "differing_tokens", "example_pairs", "exclusion_examples", "exclusion_grid",
           "exclusion_reasons", "held_out_report", "lexicon_rows", "long_texts", "mean_differing_tokens",
           "reference_methods", "sample_sizes", "winobias_subsets"]
