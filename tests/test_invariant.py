"""The attribute-blind wrapper: hand-worked variants, a zero Eq.-2 gap on swap-generated pairs, one inner call."""

from __future__ import annotations

import numpy as np
import pytest

import metricbias as mb
from metricbias.bias.pairwise import absolute_bias
from metricbias.mitigation import invariant as inv


def text_sensitive(candidates, references):
    """A metric that any changed character moves (so a swap alone gives a gap)."""
    return [sum(map(ord, c)) % 101 / 101 + len(set(c.split()) & set(r.split())) for c, r in zip(candidates, references)]


def test_variants_by_hand():
    v = inv.variants("She said her book was his.", "The person spoke.", "gender")
    assert v == {"female": ("She said her book was hers.", "The person spoke."),
                 "male": ("He said his book was his.", "The person spoke."),
                 "non_binary": ("They said their book was theirs.", "The person spoke.")}
    # object "her" (a noun phrase ends after it) and possessive "'s" kept; a row without a non-binary term
    # ("mother") leaves that group out of the mean
    assert inv.variants("He gave her the book.", "A gift.", "gender")["male"] == ("He gave him the book.", "A gift.")
    assert set(inv.variants("A woman and her mother's friend.", "Two people.", "gender")) == {"female", "male"}
    assert inv.to_group("A black man met an Asian woman.", "race", "asian") == "An asian man met an Asian woman."
    # no identity term: one variant, the pair itself
    assert inv.variants("The cat sat.", "A cat sat.", "gender") == {
        g: ("The cat sat.", "A cat sat.") for g in ("female", "male", "non_binary", "transgender", "cisgender")}


def _swap_pairs(attribute: str, n: int):
    """Swap-generated pairs from the released set of ``attribute``: candidate 1 and its swap to each other group."""
    pairs = mb.load_pairs("published", [attribute]).head(n)
    rows = []
    for c1, ref in zip(pairs["candidate_1"], pairs["reference_1"]):
        groups = list(inv.variants(c1, ref, attribute))
        for h in groups:
            c2 = inv.to_group(c1, attribute, h)
            if c2 != c1:
                rows.append((c1, c2, ref))
    return rows


@pytest.mark.parametrize("attribute", ["gender", "race", "religion"])
def test_zero_gap_on_swap_generated_pairs(attribute):
    rows = _swap_pairs(attribute, 60)
    assert len(rows) >= 30
    c1, c2, ref = map(list, zip(*rows))
    plain = mb.get_metric("bleu") if attribute == "gender" else mb.metrics.registry.function_metric(text_sensitive)()
    blind = inv.invariant(plain, attribute)
    p1, p2 = plain.score(c1, ref), plain.score(c2, ref)
    b1, b2 = blind.score(c1, ref), blind.score(c2, ref)
    assert absolute_bias(p1, p2) > 0.01  # the plain metric sees the swap
    np.testing.assert_array_equal(b1, b2)  # the wrapper cannot: exactly the same scores
    assert absolute_bias(b1, b2) == 0.0


def test_mean_over_groups_in_one_inner_call():
    calls = []

    def overlap(candidates, references):
        calls.append((list(candidates), list(references)))
        return [len(set(c.lower().split()) & set(r.lower().split())) for c, r in zip(candidates, references)]

    blind = inv.invariant(overlap, "gender", groups=["female", "male"])
    scores = blind.score(["he saw him", "she saw her", "the cat"], ["he saw a cat", "he saw a cat", "the cat"])
    # "he saw him" vs "he saw a cat": as male 2 words shared (he, saw), as female 2 (she, saw): mean 2
    np.testing.assert_allclose(scores, [2.0, 2.0, 2.0])
    assert len(calls) == 1
    cands, refs = calls[0]
    # distinct variants only: the two candidates are swaps of each other, the third has no term
    assert sorted(zip(cands, refs)) == sorted({("he saw him", "he saw a cat"), ("she saw her", "she saw a cat"),
                                               ("the cat", "the cat")})


def test_signature_wraps_the_inner_metric():
    plain = mb.get_metric("bleu")
    blind = inv.invariant(plain, "gender")
    from metricbias.signature import parse_signature

    sig = parse_signature(blind.signature)
    assert sig["metric"] == "invariant" and sig["attribute"] == "gender"
    assert sig["inner.metric"] == "bleu" and sig["direction"] == plain.direction
    assert sig["groups"] == "female,male,non_binary,transgender,cisgender"
    assert inv.invariant(plain, "race").signature != blind.signature
    assert blind.config_label() == "BLEU (gender-invariant)"
    with pytest.raises(mb.MetricError, match="no group"):
        inv.invariant(plain, "gender", groups=["female", "martian"])


def test_cost_counts_distinct_texts_and_pairs():
    c = inv.cost(["he ran", "the cat"], ["a person ran", "a cat"], "gender", groups=["female", "male"])
    # plain: 4 distinct texts, 2 pairs; wrapper: he ran, she ran, the cat + 2 references; 3 pairs
    assert c == {"texts": 5 / 4, "pairs": 3 / 2}


def test_audit_through_the_one_scoring_path():
    table = mb.audit(mb.invariant("chrf", attribute="gender"), dataset="published", attributes=["gender"],
                     sample_size=40, n_resamples=99, cache=False)
    row = table[table["measure"] == "bias"].iloc[0]
    assert row["metric"] == "chrF (gender-invariant)" and row["n_pairs"] == 40
    plain = mb.audit("chrf", dataset="published", attributes=["gender"], sample_size=40, n_resamples=99, cache=False)
    assert row["value"] < plain[plain["measure"] == "bias"]["value"].iloc[0]


def test_chapter6_comparison_and_verdict_by_hand():
    import pandas as pd

    from metricbias.book.reproduction import ch6_invariant, ch6_paper
    from metricbias.mitigation import evaluation

    def table(label, pub, built, stsb):
        rows = [("bias", "published", "gender", 10.0, pub, 0.001), ("bias", "built", "gender", 8.0, built, 0.002),
                ("quality", "stsb-dev", evaluation.QUALITY["stsb-dev"], 0.800, stsb, np.nan)]
        t = pd.DataFrame(rows, columns=["kind", "dataset", "name", "before", "after", "p_value"])
        t["statistic"], t["n"] = ["bias (Eq. 2)", "bias (Eq. 2)", "pearson"], 10
        t["change"] = t["after"] - t["before"]
        t["relative_change"] = t["change"] / t["before"].abs()
        t["signature_before"], t["signature_after"] = "a", "b"
        return t[evaluation.COMPARE_COLUMNS].assign(metric=label, backbone="tiny")

    adapter = table("BERTScore", 3.0, 4.0, 0.796)  # cuts 70% / 50%, quality -0.5%
    wrapper = table("BERTScore (gender-invariant)", 0.0, 0.0, 0.780)  # cuts 100% / 100%, quality -2.5%
    comparison = ch6_invariant.invariant_comparison(adapter, wrapper).set_index("metric")
    assert comparison.loc["BERTScore", "mitigation"] == "adapter (trained)"
    assert comparison.loc["BERTScore (gender-invariant)", "gender bias cut (built)"] == pytest.approx(1.0)
    assert comparison.loc["BERTScore (gender-invariant)", "largest quality change"] == pytest.approx(-0.025)
    assert comparison.loc["BERTScore", "bias pairs"] == 20 and comparison.loc["BERTScore", "quality items"] == 10
    assert comparison.loc["BERTScore", "largest quality loss"] == pytest.approx(-0.005)
    intervals = pd.DataFrame({"metric": "BERTScore", "variant": ["plain", "gender-invariant"],
                              "dataset": "published", "attribute": "gender", "n_pairs": 10,
                              "value": [10.0, 0.0], "ci_low": [7.0, 0.0], "ci_high": [13.0, 0.0]})
    costs = pd.DataFrame({"set": ["all"], "scored pairs": [20], "texts": [2.0], "pairs": [2.5]})
    versus = pd.DataFrame({"dataset": ["published", "built"], "attribute": "gender", "n_pairs": [10, 10],
                           "wrapper bias": [0.0, 0.0], "adapter bias": [3.0, 4.0], "difference": [-3.0, -4.0],
                           "ci_low": [-5.0, -9.0], "ci_high": [-1.0, 0.5], "p_value": [0.004, 0.2]})
    found = ch6_paper.invariant_findings(comparison.reset_index(), intervals, costs, versus)
    assert found["wrapper_bias_value"] == 0.0 and (found["plain_bias_ci_low"], found["plain_bias_ci_high"]) == (7, 13)
    assert found["wrapper_cut_published"] == pytest.approx(1.0) and found["adapter_cut_built"] == pytest.approx(0.5)
    # the interval on the built set holds 0: no finding there
    assert found["versus_published"] == "lower than" and found["versus_built"] == "not distinguishable from"
    few = ch6_paper.invariant_findings(comparison.reset_index(), intervals, costs, versus.assign(p_value=0.125))
    assert few["versus_published"] == "not distinguishable from"  # an interval alone is no finding
    assert found["wrapper_quality_loss"] == pytest.approx(0.025)
    assert found["adapter_quality_loss"] == pytest.approx(0.005)
    assert (found["encoder_passes"], found["pair_passes"]) == (2.0, 2.5)
    # another adapter, measured on other sets, and without a wrapper: not the wrapper's comparison
    other = table("Regression", 3.0, 4.0, 0.796).assign(n=7)
    with_other = ch6_invariant.invariant_comparison(pd.concat([adapter, other]), wrapper)
    assert with_other.set_index("metric").loc["Regression", ["bias pairs", "quality items"]].tolist() == [14, 7]  # two gender sets of 7


def test_cost_of_pooled_sets_is_the_cost_of_their_pairs_together():
    """Chapter 6's pooled cost row: the sets' passes pooled count as all their pairs scored at once."""
    a = (["he ran", "the cat"], ["a person ran", "a cat"])
    b = (["she sat", "he ran"], ["she sat", "a cat"])
    pooled = inv.pool([inv.passes(*a, "gender"), inv.passes(*b, "gender")])
    assert inv.ratio(pooled) == inv.cost(a[0] + b[0], a[1] + b[1], "gender")
    assert inv.ratio(inv.passes(*a, "gender")) == inv.cost(*a, "gender")


def test_rounding_gain_is_the_largest_over_the_variants():
    """A pack's tolerance for the wrapper scales with the worst-conditioned variant score it averages."""
    class Gain(mb.Metric):
        name = "gain_by_length"
        family = "user"

        def _score(self, candidates, references):
            return np.zeros(len(candidates))

        def rounding_gain(self, candidates, references, positions):
            return np.array([float(len(candidates[i])) for i in positions])

    blind = inv.invariant(Gain(), "gender", groups=["female", "male"])
    cands, refs = ["he ran far", "the cat", "she ran"], ["he ran", "a cat", "she ran"]
    # "he ran far" -> "she ran far" (11 characters) as female; "the cat" has no term; "she ran" -> "he ran" (6) or 7
    np.testing.assert_array_equal(blind.rounding_gain(cands, refs, [0, 1, 2]), [11.0, 7.0, 7.0])
    np.testing.assert_array_equal(blind.rounding_gain(cands, refs, [2]), [7.0])


def test_chapter6_wrapper_versus_adapter_is_the_paired_difference_of_their_biases(tmp_path):
    """The verdict's test: the wrapper's Eq. 2 bias minus the shipped adapter's, pair by pair on the same pairs."""
    from metricbias.bias.pairwise import absolute_bias
    from metricbias.book.reproduction import ch6_adapters, ch6_invariant
    from metricbias.cache import ScoreCache

    shipped = ch6_adapters.shipped_adapters({"BERTScore": ("bertscore", "all-MiniLM-L6-v2")})
    cache = ScoreCache(tmp_path / "scores.sqlite")
    versus = ch6_invariant.wrapper_versus_adapter(shipped, sample_size=3, n_resamples=99, cache=cache, device="cpu")
    assert list(versus["dataset"]) == ["published", "built"] and set(versus["n_pairs"]) == {3}
    for row in versus.to_dict("records"):
        assert row["difference"] == pytest.approx(row["wrapper bias"] - row["adapter bias"])
        assert row["ci_low"] <= row["difference"] <= row["ci_high"] and 0 < row["p_value"] <= 1
    # each bias is Eq. 2 of that metric's scores of those pairs (read back from the cache the test filled)
    meta = shipped["BERTScore"].meta
    plain = ch6_invariant.metric_for(None, meta=meta, device="cpu")
    pairs = mb.datasets.sample(ch6_invariant.bias_pairs(["gender"]), 3, 0)
    for metric, column in ((ch6_invariant.metric_for(shipped["BERTScore"].folder, meta=meta, device="cpu"),
                            "adapter bias"), (inv.invariant(plain, "gender"), "wrapper bias")):
        scored = ch6_invariant.score_pairs(pairs, metric, cache=cache)
        for dataset, row in versus.set_index("dataset").iterrows():
            s = scored[scored["dataset"] == dataset]
            assert row[column] == pytest.approx(absolute_bias(s["score_1"], s["score_2"]))
