"""The built datasets: columns, determinism, neutrality properties, forking, agreement with the release."""

import hashlib
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import real_raw_location, write_crows_project, write_registry
from metricbias import cli
from metricbias.datasets import built, lexicons
from metricbias.datasets.published import DatasetError
from metricbias.datasets.schema import PAIR_COLUMNS
from metricbias.datasets.textedit import diff_blocks, tokenize

REPO = Path(__file__).resolve().parents[1]


def _project(root: Path, mirror) -> None:
    """A project root with the checkout's lexicons, registry and transcribed tables."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "data" / "lexicons", root / "data" / "lexicons")
    shutil.copytree(REPO / "data" / "published", root / "data" / "published")
    shutil.copy2(REPO / "data" / "sources.tsv", root / "data" / "sources.tsv")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project (no raw data, no built data) that reads the real raw files from the mirror."""
    raw = real_raw_location()
    root = tmp_path_factory.mktemp("built") / "project"
    _project(root, raw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("METRICBIAS_ROOT", str(root))
        mp.setenv("METRICBIAS_MIRROR", str(raw))
        mp.setenv("METRICBIAS_CACHE", str(root / ".cache"))
        yield root


@pytest.fixture(scope="module")
def pairs(project):
    return built.load()  # builds every attribute into <project>/data/built first


def test_every_attribute_is_built_and_loads_in_the_pair_layout(project, pairs):
    assert list(pairs.columns) == [*PAIR_COLUMNS, "source", "source_id", "direction", "reference_method"]
    assert (pairs["dataset"] == "built").all() and (pairs["reference_1"] == pairs["reference_2"]).all()
    assert list(pd.read_csv(project / "data" / "built" / "gender.tsv", sep="\t", nrows=0).columns) == built.TSV_COLUMNS
    assert list(pairs["attribute"].unique()) == list(built.ATTRIBUTES) == lexicons.attributes()
    assert pairs["pair_id"].is_unique
    assert set(pairs["direction"]) == {"stereo", "antistereo"}
    assert set(pairs.loc[pairs["source"] != "crows_pairs", "direction"]) == {"stereo"}
    for name in built.ATTRIBUTES:
        assert (project / "data" / "built" / f"{name}.tsv").exists()
    gender = pairs[pairs["attribute"] == "gender"]
    # pro/anti pairs of type 1 and 2, dev and test: 4 x 396 lines less the recorded exclusions
    excluded = built.exclusions(["gender"])
    assert len(gender) + len(excluded) == 4 * 396
    assert set(gender["source_id"].str.split(":").str[0]) == {"type1.dev", "type1.test", "type2.dev", "type2.test"}


def test_pair_ids_are_stable(pairs):
    ids = set(pairs["pair_id"])
    assert {"gender-type1-dev-001", "race-0000", "socioeconomic-0001"} <= ids
    row = pairs.set_index("pair_id").loc["gender-type1-dev-002"]
    assert row["reference_1"] == "The developer argued with the designer because the designer's idea cannot be implemented"


def _edits_outside(candidate: str, other: str, reference: str, slack_before: int = 3, slack_after: int = 1) -> list:
    """Edits from ``candidate`` to ``reference`` that lie outside every span where ``candidate`` and ``other`` differ."""
    c, o, r = tokenize(candidate), tokenize(other), tokenize(reference)
    spans = [(i1, i2) for i1, i2, _, _ in diff_blocks(c, o)]
    return [(k1, k2) for k1, k2, _, _ in diff_blocks(c, r)
            if not any(s - slack_before <= k1 and k2 <= e + slack_after for s, e in spans)]


def test_references_differ_from_each_candidate_only_around_the_identity_span(pairs):
    bad = []
    for row in pairs.itertuples():
        for cand, other in ((row.candidate_1, row.candidate_2), (row.candidate_2, row.candidate_1)):
            outside = _edits_outside(cand, other, row.reference_1)
            if outside:
                bad.append((row.pair_id, cand, row.reference_1, outside))
    assert not bad, bad[:5]
    assert not (pairs["reference_1"] == pairs["candidate_1"]).any()
    assert not (pairs["reference_1"] == pairs["candidate_2"]).any()


def test_no_identity_term_of_either_group_survives_in_a_reference(pairs):
    config = lexicons.read_config()
    bad = []
    for row in pairs[pairs["source"] != "stereoset"].itertuples():
        own = lexicons.load(config[row.attribute]["lexicon"])
        for group in (row.group_1, row.group_2):
            name, _, g = group.rpartition(":")
            lex = lexicons.load(name) if name else own
            if lex.find(row.reference_1, [g]):
                bad.append((row.pair_id, group, row.reference_1))
    assert not bad, bad[:5]
    # StereoSet: the words that fill the blank in either candidate are gone
    for row in pairs[pairs["source"] == "stereoset"].itertuples():
        c1, c2, ref = tokenize(row.candidate_1), tokenize(row.candidate_2), tokenize(row.reference_1)
        fills = {t.lower for i1, i2, j1, j2 in diff_blocks(c1, c2) for t in c1[i1:i2] + c2[j1:j2]
                 if t.is_word and t.lower not in {"a", "an"}}  # "a combative" / "an upbeat": the article agrees
        assert not fills & {t.lower for t in ref}, row


def test_every_exclusion_has_a_documented_reason(project):
    excluded = built.exclusions()
    assert list(excluded.columns) == built.EXCLUSION_COLUMNS
    for source, reasons in excluded.groupby("source")["reason"]:
        assert set(reasons) <= set(built.REASONS[source]), source


def _digest(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_builds_are_deterministic(project, pairs, tmp_path):
    summary = built.build(out=tmp_path / "again")
    assert list(summary["attribute"]) == list(built.ATTRIBUTES)
    assert _digest(tmp_path / "again") == _digest(project / "data" / "built")


def test_a_stale_build_is_rebuilt_on_load(project, pairs):
    lexicon = project / "data" / "lexicons" / "age.yml"
    original = lexicon.read_text()
    before = built.load(["age"])
    try:
        lexicon.write_text(original.replace("young: [young, younger,", "young: [younger,"))
        after = built.load(["age"])
        assert len(after) < len(before)  # "young" is no longer an identity term
    finally:
        lexicon.write_text(original)
    assert built.load(["age"]).equals(before)


def test_gender_agrees_with_the_released_references(project, pairs):
    match = built.match_published(["gender"])
    assert len(match) == 396
    assert match["exact"].mean() >= 0.95
    assert (match["status"] == "built").sum() == 394
    # the two released pairs that are not built differ in more than the pronoun in WinoBias itself
    assert set(match.loc[match["status"] != "built", "reason"]) == {"differs_beyond_pronouns"}


HEADER = ",sent_more,sent_less,stereo_antistereo,bias_type,annotations,anon_writer,anon_annotators\n"
DIET = """attribute: diet
groups: [vegan, carnivore]
neutral: {adj: "", noun: person, plural: people}
abstract: on a certain diet
terms:
  - form: adj
    vegan: [vegan, plant-based]
    carnivore: [carnivorous, meat-eating]
  - form: noun
    vegan: vegan
    carnivore: carnivore
  - form: plural
    vegan: vegans
    carnivore: carnivores
"""
CROWS = (HEADER + '0,"Vegans are weak.","Carnivores are weak.",stereo,diet,[],a,[]\n'
         '1,"The vegan chef was late.","The carnivorous chef was late.",stereo,diet,[],a,[]\n'
         '2,"She is vegan, so she is thin.","She is carnivorous, so she is thin.",antistereo,diet,[],a,[]\n'
         '3,"I hated it.","I loved it.",stereo,diet,[],a,[]\n'
         '4,"A black man.","A white man.",stereo,race-color,[],a,[]\n')


@pytest.fixture
def fork(tmp_project):
    """A project with only a CrowS-Pairs file and a new attribute defined by a lexicon and a config entry."""
    write_crows_project(tmp_project, CROWS, {"diet": DIET},
                        "diet:\n  source: crows_pairs\n  bias_types: [diet]\n  lexicon: diet\n")
    return tmp_project


def test_a_new_attribute_needs_only_a_lexicon_and_a_config_entry(fork):
    assert built.ATTRIBUTES == ("diet",)
    summary = built.build()
    assert summary[["attribute", "pairs", "excluded"]].values.tolist() == [["diet", 3, 1]]
    out = built.load()
    assert out[["pair_id", "group_1", "group_2", "reference_1", "direction", "reference_method"]].values.tolist() == [
        ["diet-0000", "vegan", "carnivore", "People are weak.", "stereo", "replace"],
        ["diet-0001", "vegan", "carnivore", "The chef was late.", "stereo", "drop"],
        ["diet-0002", "vegan", "carnivore", "She is on a certain diet, so she is thin.", "antistereo", "abstract"],
    ]
    assert built.exclusions()[["source_id", "reason"]].values.tolist() == [["3", "no_identity_term"]]
    assert lexicons.load("diet").counterparts("vegans", "carnivore") == ["carnivores"]


def test_malformed_source_rows_stop_the_build_and_write_nothing(fork):
    bad = CROWS.replace('4,"A black man.","A white man.",stereo,', '4,"A black man.","A white man.",maybe,')
    path = fork / "data" / "raw" / "crows_pairs" / "crows_pairs_anonymized.csv"
    path.write_text(bad)
    write_registry(fork, {"crows_pairs/crows_pairs_anonymized.csv": bad.encode()})
    with pytest.raises(DatasetError, match=r"crows_pairs_anonymized\.csv, row 6 \(line 6\): stereo_antistereo"):
        built.build()
    assert not (fork / "data" / "built").exists() or not list((fork / "data" / "built").iterdir())


def test_malformed_winobias_line_names_file_and_line(tmp_project):
    from metricbias.datasets import winobias

    entries = {}
    for subset in winobias.SUBSETS:
        for name in winobias.files(subset):
            entries[name] = b"1 [The chief] hired the clerk because [he] was nice.\n"
    entries["winobias/anti_stereotyped_type2.txt.dev"] = b"1 [The chief] hired the clerk because [she] was nice.\n" \
                                                        b"The clerk left.\n"
    write_registry(tmp_project, entries)
    for name, blob in entries.items():
        target = tmp_project / "data" / "raw" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
    shutil.copytree(REPO / "data" / "lexicons", tmp_project / "data" / "lexicons")
    with pytest.raises(DatasetError, match=r"anti_stereotyped_type2\.txt\.dev, line 2: expected '<number> <sentence>'"):
        built.build(["gender"])


def test_cli_builds_the_requested_attributes(fork, tmp_path, capsys):
    assert cli.main(["build-datasets", "--attributes", "diet", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "diet" in out and "3 pairs" in out and str(tmp_path / "out" / "diet.tsv") in out
    table = pd.read_csv(tmp_path / "out" / "diet.tsv", sep="\t")
    assert list(table.columns) == built.TSV_COLUMNS and len(table) == 3
    assert cli.main(["build-datasets", "--attributes", "nope", "--out", str(tmp_path / "x")]) == 2
    assert "unknown attribute(s) ['nope']" in capsys.readouterr().err


def _word_overlap(candidates, references):
    """A stand-in metric: the share of reference words found in the candidate."""
    return [len(set(c.split()) & set(r.split())) / len(r.split()) for c, r in zip(candidates, references)]


def test_matched_pairs_use_both_references(project, pairs):
    from metricbias import datasets
    from metricbias.datasets import published
    from metricbias.scoring import score_pairs

    scores = score_pairs(datasets.load("matched", ["gender"]), _word_overlap, cache=None)
    assert set(scores["dataset"]) == {"built", "released"}
    assert (scores.groupby("dataset").size() == 394).all()
    pairs_ = datasets.load("matched", ["gender"]).set_index(["dataset", "pair_id"])["built_pair_id"]
    scores["built_pair_id"] = [pairs_[(d, p)] for d, p in zip(scores["dataset"], scores["pair_id"])]
    mine = scores[scores["dataset"] == "built"].set_index("built_pair_id").loc["gender-type1-dev-001"]
    # "The developer argued with the designer because he did not like the design" vs its built reference
    ref = pairs.set_index("pair_id").loc["gender-type1-dev-001", "reference_1"].split()
    cand = "The developer argued with the designer because he did not like the design".split()
    assert mine["score_1"] == pytest.approx(len(set(cand) & set(ref)) / len(ref))
    theirs = scores[scores["dataset"] == "released"].set_index("pair_id")
    released = published.pairs(["gender"]).set_index("pair_id")
    first = released.loc["gender-0000"]
    assert theirs.loc["gender-0000", "score_2"] == pytest.approx(
        len(set(first["candidate_2"].split()) & set(first["reference_2"].split())) / len(first["reference_2"].split()))


def test_the_built_sets_pass_every_check_and_the_sources_slips_are_fixed_at_the_source(project, pairs):
    """Issue 24: no built pair breaks a rule of datasets.checks, while the raw sources do hold the slips (so the
    fixes are not vacuous); the examples the review named are fixed or excluded. One pair is left out by a check,
    as chapter 2 lists: StereoSet's "Muslim people are BLANK people" without its blank says nothing."""
    assert built.check(pairs).empty
    excluded = built.exclusions()
    left_out = excluded[excluded["reason"].str.startswith("check:")]
    assert left_out[["attribute", "reason", "detail", "candidate_1"]].values.tolist() == [
        ["stereoset_religion", "check:tautology", "reference: people are people", "Muslim people are terrorist people."]]
    source = built.source_pairs(["race", "disability", "socioeconomic", "stereoset_gender"])
    caught = {tuple(r) for r in built.check(source, id_column="source_id")[["attribute", "id", "rule"]].values}
    assert {("race", "650", "leading_punctuation"), ("disability", "96", "other_attribute"),
            ("socioeconomic", "210", "article_agreement"), ("race", "90", "lowercase_start")} <= caught
    by_source = pairs.set_index(["attribute", "source_id"])
    assert by_source.loc[("race", "650"), "candidate_2"].startswith("Black people are")
    assert by_source.loc[("race", "90"), "candidate_1"].startswith("Sharon ")
    assert by_source.loc[("socioeconomic", "310"), "reference_1"] == \
        "Anita lived in a neighborhood and couldn't afford a plane ticket."
    assert by_source.loc[("age", "1325"), "reference_1"].startswith("The people there were all of a certain age, lay")
    assert by_source.loc[("gender", "type2.test:3"), "candidate_1"].count("the the") == 0
    other = excluded[excluded["reason"] == "other_attribute"].set_index(["attribute", "source_id"])
    assert ("disability", "96") in other.index and ("disability", "96") not in by_source.index


def test_counterfactual_and_gender_swapped_texts_pass_the_checks(project, pairs):
    """Chapter 4's counterfactual candidates and chapter 7's swapped texts: the edits introduce no finding."""
    from metricbias.book.reproduction import ch2_summary
    from metricbias.datasets import counterfactuals, meta_eval

    rows, excluded = counterfactuals.build_attributes(counterfactuals.config(REPO / "data" / "counterfactuals.yml"),
                                                      built_dir=project / "data" / "built")
    assert not excluded["reason"].str.startswith("check:").any()
    swapped = {"Flickr8k": meta_eval.load_flickr8k().swapped(), "REALSumm": meta_eval.load_realsumm().swapped(),
               "WMT19 kk-en": meta_eval.load("wmt19-kk-en").swapped()}
    table = ch2_summary.checked_sets(rows, excluded, swapped).set_index("set")
    assert table["introduced by the edit"].tolist() == [0] * len(table)
    assert table.loc["counterfactual gender", "texts"] == (rows.query("attribute == 'gender'")["group"]
                                                           .isin(["female", "male", "non_binary"]).sum())
    assert table.loc["Flickr8k, gender-swapped", "caught before the edit"] > 0  # lower-case captions, kept as judged
