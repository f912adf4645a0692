"""The notes the chapters write under their tables (metricbias.book.reproduction.notes), on hand-made input."""

import warnings

from metricbias.book import display
from metricbias.book.reproduction import notes


def test_warning_summary_counts_the_warnings_and_names_their_kinds():
    with display.capture_warnings() as caught:
        warnings.warn("a constant metric", UserWarning)
        warnings.warn("an overflow", RuntimeWarning)
        warnings.warn("another constant metric", UserWarning)
    assert notes.warning_summary(caught, "their bias is undefined") == \
        "3 warnings (RuntimeWarning, UserWarning): their bias is undefined."
    assert notes.warning_summary(caught[:1], "one") == "1 warning (UserWarning): one."
    assert notes.warning_summary([], "nothing") == ""
    with display.capture_warnings() as with_notices:
        warnings.warn("a constant metric", UserWarning)
        warnings.warn("`old_api` is deprecated; use `new_api`\nsecond line", DeprecationWarning)
        warnings.warn("`old_api` is deprecated; use `new_api`\nsecond line", DeprecationWarning)
    # a library's notice of a coming change is not what the chapter's sentence describes: named apart
    assert notes.warning_summary(with_notices, "their bias is undefined") == (
        "1 warning (UserWarning): their bias is undefined. 2 notices of a library's coming change "
        "(DeprecationWarning): `old_api` is deprecated; use `new_api`.")
    assert notes.warning_summary(with_notices[1:2], "x") == \
        "1 notice of a library's coming change (DeprecationWarning): `old_api` is deprecated; use `new_api`."


def test_pack_sentence_without_packs_says_every_score_was_live():
    numbers = {"scores": 1200, "from_packs": 0, "computed": 1200, "checked": 0, "max_diff": 0.0}
    assert notes.pack_sentence(numbers) == "All 1,200 scores of this chapter were computed live."
    every = {"scores": 96, "from_packs": 96, "computed": 0, "checked": 32, "max_diff": 3e-7}
    assert notes.pack_sentence(every) == ("Of this chapter's 96 scores, 96 were read from the stored scores released "
                                          "with the book, checked by recomputing 32 of them (largest difference "
                                          "3e-07).")
    cached = {"scores": 100, "from_packs": 40, "computed": 10, "checked": 32, "max_diff": 0.0}
    assert notes.pack_sentence(cached).endswith("the other 60 were computed live (50 of them earlier, read from the "
                                                "score cache).")
