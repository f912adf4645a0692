"""Chapter 3's reading of the generation configurations' quality gap: one of three clauses, as the data decide."""

import pandas as pd

from metricbias.book.reproduction import ch3_quality


def test_the_gap_reading_follows_the_generation_configurations_quality():
    gaps = pd.DataFrame({"key": ["darr", "stsb"], "best": ["BARTScore-F", "PRISM-F"], "weakest": ["BLEU", "BLEU"],
                         "difference": [-0.05, 0.02], "ci_low": [-0.08, -0.01], "ci_high": [-0.02, 0.05],
                         "word": ["below 0", "not distinguishable from 0"]})
    below = ch3_quality.generation_gap_findings(gaps)
    assert ch3_quality.generation_gap_reading(below).startswith("so on this grid an effect of the paradigm cannot")
    level = ch3_quality.generation_gap_findings(gaps.assign(word="not distinguishable from 0"))
    assert ch3_quality.generation_gap_reading(level) == ("so a lower quality of the generation configurations does "
                                                         "not account for the paradigm's share")
    unmeasured = ch3_quality.generation_gap_findings(gaps.iloc[:0])
    assert unmeasured["darr_word"] == unmeasured["stsb_word"] == "not measured"
    assert ch3_quality.generation_gap_reading(unmeasured) == ("so the grid does not show whether the paradigm's "
                                                              "share is an effect of quality")


def test_attribute_tally_states_a_shared_verdict_once():
    import pandas as pd

    from metricbias.book.reproduction import ch3_paradigm_claim as pc

    def claim(verdicts, average):
        rows = [{"source": pc.FIXED, "attribute": a, "verdict": v} for a, v in verdicts.items()]
        rows += [{"source": pc.FIXED, "attribute": "average", "verdict": average},
                 {"source": pc.RELEASED, "attribute": "average", "verdict": "reverses"}]
        return pd.DataFrame(rows)

    six = dict.fromkeys(["age", "gender", "race", "religion", "physical_appearance", "occupation"], "holds")
    assert pc.attribute_tally(claim(six, "holds")) == "holds on all 6 attributes and on the average"
    mixed = {**six, "age": "not distinguishable at this size", "race": "reverses"}
    assert pc.attribute_tally(claim(mixed, "holds")) == (
        "is not distinguishable at this size on 1 of the 6 attributes (age), holds on 4 of the 6 attributes "
        "(gender, religion, physical appearance and occupation), reverses on 1 of the 6 attributes (race), and on the average "
        "holds")
