"""What a profile still draws (``reproduction.drawn``): read from the chapters' parameters under the profile."""

from metricbias.book import chapter_profiles, runner
from metricbias.book.reproduction import drawn


def test_default_profile_draws_only_what_it_declares():
    table = drawn.drawn("offline")
    assert set(table.columns) == set(drawn.COLUMNS)
    for row in table.itertuples():  # each listed draw is the chapter's value under the profile, and not 0
        assert runner.chapter_parameters("offline", row.chapter)[row.parameter] == row.value > 0
        assert row.what  # the parameters cell says what it counts
    # the released, built and counterfactual pairs, chapter 3's quality sets, Flickr8k, REALSumm and DARR of
    # chapter 7 run whole
    listed = set(zip(table["chapter"], table["parameter"]))
    for chapter, parameter in [("03_metrics_and_backbones", "sample_size"),
                               ("03_metrics_and_backbones", "built_sample_size"),
                               ("03_metrics_and_backbones", "darr_pairs"), ("03_metrics_and_backbones", "stsb_pairs"),
                               ("04_bias_measures", "sample_size"), ("07_gender_swap", "sample_size"),
                               ("07_gender_swap", "summary_sample_size"), ("07_gender_swap", "darr_pairs"),
                               ("05_association_tests", "sample_size"), ("05_association_tests", "drawn_sample_size")]:
        assert (chapter, parameter) not in listed
        assert runner.chapter_parameters("offline", chapter)[parameter] == 0
    # nothing is drawn in the default build
    assert table.empty and drawn.drawn_sentence("offline") == "Every data set enters whole."


def test_appendix_table_names_each_draw_in_words():
    table = drawn.for_appendix("smoke")
    raw = drawn.drawn("smoke")
    assert len(table) == len(raw) > 0
    assert list(table["parameter (0: whole set)"]) == list(raw["parameter"]) and list(table["kept"]) == list(raw["value"])
    assert table["chapter"].str.match(r"^(chapter \d+|appendix A\d)$").all()
    assert not table["what is drawn"].str.contains(r"\(").any()


def test_drawn_list_names_each_draw_with_its_count_or_says_none(monkeypatch):
    listed = drawn.drawn_list("smoke")
    table = drawn.for_appendix("smoke")
    assert listed.count("; ") == len(table) - 1
    first = table.iloc[0]
    assert listed.startswith(f"{first['kept']:,} {first['what is drawn']} ({first['chapter']})")
    monkeypatch.setattr(drawn, "for_appendix", lambda profile: table.iloc[:0])
    assert drawn.drawn_list("smoke") == "none"


def test_drawn_sentence_says_chapter_count_and_what_or_whole(monkeypatch):
    table = drawn.for_appendix("smoke")
    said = drawn.drawn_sentence("smoke")
    first = table.iloc[0]
    assert first["chapter"].startswith("chapter")
    assert said.startswith(f"{first['chapter'].capitalize()} draws a seeded sample of {first['kept']:,} "
                           f"{first['what is drawn']}.")
    assert said.count(" draws a seeded sample of ") == len(table)
    monkeypatch.setattr(drawn, "for_appendix", lambda profile: table.iloc[:0])
    assert drawn.drawn_sentence("smoke") == "Every data set enters whole."


def test_chapters_phrase():
    assert drawn.chapters_phrase([]) == "no chapter"
    assert drawn.chapters_phrase(["04_bias_measures"]) == "chapter 4"
    assert drawn.chapters_phrase(["04_a", "05_b", "07_c", "08_d"]) == "chapters 4, 5, 7 and 8"


def test_left_out_by_kind_agrees_with_the_left_out_table():
    for profile in ("offline", "smoke"):
        kinds = drawn.left_out_by_kind(profile)
        table = drawn.left_out(profile)
        assert kinds["left_out"] == len(table)
        generation = [r.chapter for r in table.itertuples() if "BARTScore" in r._2 and "PRISM" in r._2]
        assert kinds["generation"] == (drawn.chapters_phrase([f"{c.split()[-1]}_x" for c in generation]))


def test_full_is_the_default_profile_under_another_name():
    for chapter in chapter_profiles.PROFILES["offline"]:
        if chapter != "common":
            assert chapter_profiles.parameters("offline", chapter) | {"profile": "x"} == \
                chapter_profiles.parameters("full", chapter) | {"profile": "x"}
