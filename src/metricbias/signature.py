"""Score signatures: ``key:value|key:value|...`` strings that say what produced a score (as sacreBLEU's).

A metric writes its signature (:attr:`metricbias.metrics.Metric.signature`); score
tables carry it in a ``signature`` column and every table of the book prints it.
This module formats and reads them, so that code holding only a score table can
still ask, say, whether lower scores are better.
"""

from __future__ import annotations


def format_signature(fields: dict[str, str]) -> str:
    return "|".join(f"{k}:{v}" for k, v in fields.items())


def parse_signature(signature: str) -> dict[str, str]:
    """``"metric:bleu|direction:higher|..."`` -> ``{"metric": "bleu", "direction": "higher", ...}``."""
    out = {}
    for part in str(signature).split("|"):
        key, sep, value = part.partition(":")
        if sep:
            out[key] = value
    return out


def configuration(signature: str) -> str:
    """The signature less the library versions of its ``version`` field: the same metric configuration (options,
    weight fingerprints and the metric's implementation revision, kept as a ``rev`` field), whatever library
    builds computed it. A bare leading field (a PLL signature's score function, ``pll-cps|model:...``) is kept."""
    fields = parse_signature(signature)
    version = fields.pop("version", None)
    revision = [part for part in (version or "").split(",") if part.startswith("rev-")]
    if revision:
        fields["rev"] = revision[-1].removeprefix("rev-")
    bare = [part for part in str(signature).split("|") if ":" not in part]
    return "|".join([*bare, format_signature(fields)]) if bare else format_signature(fields)


def direction(signature: str) -> str:
    """``higher`` or ``lower``: which scores are better, as the signature records it (``higher`` if unrecorded)."""
    return parse_signature(signature).get("direction", "higher")
