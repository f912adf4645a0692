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
                               ("07_gender_swap", "summary_sample_size"), ("07_gender_swap", "darr_pairs")]:
        assert (chapter, parameter) not in listed
        assert runner.chapter_parameters("offline", chapter)[parameter] == 0


def test_sentence_names_each_draw_and_the_whole_data_case(monkeypatch):
    sentence = drawn.drawn_sentence("offline")
    for row in drawn.drawn("offline").itertuples():
        assert f"`{row.parameter}={row.value}`" in sentence
    smoke = drawn.drawn("smoke")
    assert len(smoke) > 0 and "`sample_size=" in drawn.drawn_sentence("smoke")
    monkeypatch.setattr(drawn, "drawn", lambda profile: drawn.pd.DataFrame(columns=drawn.COLUMNS))
    assert drawn.drawn_sentence("offline") == "Under the `offline` profile every chapter runs on its whole data."


def test_full_is_the_default_profile_under_another_name():
    for chapter in chapter_profiles.PROFILES["offline"]:
        if chapter != "common":
            assert chapter_profiles.parameters("offline", chapter) | {"profile": "x"} == \
                chapter_profiles.parameters("full", chapter) | {"profile": "x"}
