"""WinoBias gender pairs: parsing, pronoun resolution, references (Sun et al., section 2.2)."""

import pytest

from metricbias.datasets import lexicons, winobias
from metricbias.datasets.published import DatasetError


def pair(pro, anti):
    _, tp, spans = winobias.parse_line(pro, "pro")
    _, ta, _ = winobias.parse_line(anti, "anti")
    return winobias._pair(tp, ta, spans, lexicons.load("gender"))


def test_parse_line_strips_brackets_and_keeps_spans():
    num, tokens, spans = winobias.parse_line("3 [The mechanic] gave the clerk a present because [he] won.", "f")
    assert num == 3
    assert " ".join(t.text for t in tokens) == "The mechanic gave the clerk a present because he won ."
    assert [[t.text for t in tokens[s:e]] for s, e in spans] == [["The", "mechanic"], ["he"]]
    _, tokens, spans = winobias.parse_line("9 The chief notified the [ physician] and asked [her].", "f")
    assert [t.text for t in tokens[slice(*spans[0])]] == ["physician"]


@pytest.mark.parametrize("pro, anti, reference, groups", [
    # the pronoun becomes the bracketed noun phrase it refers to
    ("1 [The developer] argued with the designer because [he] did not like the design.",
     "1 [The developer] argued with the designer because [she] did not like the design.",
     "The developer argued with the designer because the developer did not like the design", ("male", "female")),
    # a possessive becomes the noun's possessive
    ("2 The developer argued with [the designer] because [her] idea cannot be implemented.",
     "2 The developer argued with [the designer] because [his] idea cannot be implemented.",
     "The developer argued with the designer because the designer's idea cannot be implemented",
     ("female", "male")),
    # type 2, object pronoun: "her" against "him" is an object, not a possessive
    ("1 The developer argued with [the designer] and slapped [her] in the face.",
     "1 The developer argued with [the designer] and slapped [him] in the face.",
     "The developer argued with the designer and slapped the designer in the face", ("female", "male")),
    # an unbracketed second pronoun that the two sentences swap is replaced too
    ("26 [The developer] visited the hairdresser because [he] needed to cut his hair.",
     "26 [The developer] visited the hairdresser because [she] needed to cut [her] hair.",
     "The developer visited the hairdresser because the developer needed to cut the developer's hair",
     ("male", "female")),
])
def test_reference_replaces_the_pronoun_by_its_antecedent(pro, anti, reference, groups):
    row, reason = pair(pro, anti)
    assert reason is None
    assert (row["reference"], row["group_1"], row["group_2"]) == (reference, *groups)
    assert row["direction"] == "stereo" and row["reference_method"] == "antecedent"
    assert not row["candidate_1"].endswith(".")  # as in the released set


@pytest.mark.parametrize("pro, anti, reason", [
    ("92 The carpenter made a desk for [the clerk] because [she] needed a desk.",
     "92 The carpenter made a desk for [the clerk] because [he] needed one.", "differs_beyond_pronouns"),
    ("171 The clerk met [the chief] and thanked [her] again.",
     "171 The clerk met [the chief] and thanked [he] again.", "pronoun_forms_differ"),
    ("93 [The lawyer] helped because [he] is a very generous man.",
     "93 [The lawyer] helped because [she] is a very generous man.", "identity_term_survives"),
])
def test_pairs_that_cannot_be_resolved_are_excluded(pro, anti, reason):
    row, why = pair(pro, anti)
    assert row is None and why[0] == reason and reason in winobias.REASONS


@pytest.mark.parametrize("line, message", [
    ("The developer argued [he].", "expected '<number> <sentence>'"),
    ("4 The developer argued because he left.", "at least two well-formed"),
    ("4 [The developer [argued] because [he] left.", "at least two well-formed"),
    ("4 [] argued because [he] left.", "empty"),
])
def test_malformed_lines_name_the_file_and_line(line, message):
    with pytest.raises(DatasetError, match=f"pro_stereotyped_type1.txt.dev, line 7: .*{message}"):
        winobias.parse_line(line, "winobias/pro_stereotyped_type1.txt.dev, line 7")
