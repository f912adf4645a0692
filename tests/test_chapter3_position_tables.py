"""Chapter 3's table of where each live configuration falls against the released ones of its paradigm, and the
download of paradigm means: their labels and order on hand-made points."""

import pandas as pd
import pytest

from metricbias.book.reproduction import ch3_paradigms


def points():
    rows = [("M-rel-1", "Matching", "released", 10.0), ("M-rel-2", "Matching", "released", 20.0),
            ("R-rel", "Regression", "released", 30.0),
            ("M-low", "Matching", "live", 5.0), ("M-mid", "Matching", "live", 15.0),
            ("M-edge", "Matching", "live", 20.0), ("R-high", "Regression", "live", 31.0),
            ("G-live", "Generation", "live", 1.0)]
    return pd.DataFrame([{"metric": m, "paradigm": p, "source": s, "avg_bias": b, "params_m": 22.7}
                         for m, p, s, b in rows])


def test_live_positions_labels_against_the_released_range():
    pos = ch3_paradigms.live_positions(points()).set_index("metric")
    assert list(pos.index) == ["M-low", "M-mid", "M-edge", "R-high", "G-live"]  # live rows only, in order
    assert pos["position"].to_dict() == {"M-low": "below", "M-mid": "inside", "M-edge": "inside",  # ends count
                                         "R-high": "above", "G-live": "no released configuration"}
    assert (pos.loc["M-mid", "released min"], pos.loc["M-mid", "released max"]) == (10.0, 20.0)
    assert (pos.loc["R-high", "released min"], pos.loc["R-high", "released max"]) == (30.0, 30.0)
    assert pd.isna(pos.loc["G-live", "released min"])
