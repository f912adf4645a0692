"""The short notes every chapter writes under its tables, in the book's words: warnings caught while computing
(:func:`warning_summary`), the configurations a chapter leaves out (:func:`left_out_note`), what seeded draws kept
of the meta-evaluation sets (:func:`drawn_sets_note`), how many scores came from score packs
(:func:`pack_sentence`), and a difference with its interval (:func:`interval_text`).

The numbers behind them are the library's (:func:`metricbias.profiles.suite`,
:func:`metricbias.book.score_sources.chapter_numbers`, :func:`metricbias.bias.claims.compare`); only the sentences are here.
"""

from __future__ import annotations

from ... import profiles
from ...datasets.meta_eval import JudgedSet
from .. import score_sources


#: warnings that announce a library's coming change (an API to be removed): never what a chapter's sentence
#: about its warnings describes, so they are named apart, with their messages
NOTICES = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def warning_summary(caught: list, what: str) -> str:
    """One line for a list of caught warnings (:class:`metricbias.book.display.capture_warnings`): ``what`` with the
    number of warnings and their kinds; a library's notices of a coming change (:data:`NOTICES`) are counted
    apart, each distinct message once (its first line).

    ``what`` says in the chapter's words what the warnings mean ("metrics gave every
    candidate the same score, so their bias is undefined"). Paths are left out.
    """
    def kinds(ws):
        return ", ".join(sorted({w.category.__name__ for w in ws}))

    notices = [w for w in caught if issubclass(w.category, NOTICES)]
    found = [w for w in caught if not issubclass(w.category, NOTICES)]
    parts = []
    if found:
        parts.append(f"{len(found)} warning{'s' if len(found) != 1 else ''} ({kinds(found)}): {what}.")
    if notices:
        messages = sorted({str(w.message).strip().splitlines()[0][:160] for w in notices if str(w.message).strip()})
        parts.append(f"{len(notices)} notice{'s' if len(notices) != 1 else ''} of a library's coming change "
                     f"({kinds(notices)}){': ' + '; '.join(messages) if messages else ''}.")
    return " ".join(parts)


def left_out_note(profile: str, skip, parameter: str = "skip_metrics", metric_names=None) -> str:
    """A Markdown sentence naming the configurations of ``profile``'s suite that ``skip`` leaves out of a chapter
    (empty when none, or when the chapter runs the ``metric_names`` it was given instead of the suite), with the
    parameter that brings them back."""
    labels = left_out_labels(profile, skip, metric_names)
    if not labels:
        return ""
    return (f"Left out of this chapter on the `{profile}` profile, to keep its run short: "
            f"{', '.join(labels)} (`{parameter}`; `-p {parameter}=''` runs them too). "
            "Chapter 3 measures every configuration.")


def left_out_labels(profile: str, skip, metric_names=None) -> list[str]:
    """The labels of the configurations of ``profile``'s suite that ``skip`` leaves out of a chapter (none when the
    chapter runs the ``metric_names`` it was given instead of the suite)."""
    if metric_names:
        return []
    kept = profiles.suite(profile, skip)
    return [s.label for s in profiles.suite(profile) if s not in kept]


def drawn_sets_note(sets: dict) -> str:
    """A Markdown sentence naming what seeded draws kept: ``{"Flickr8k images": (kept, full, parameter), ...}``
    (items of a judged set, pairs of a pair set); empty when every set is whole."""
    def size(data) -> int:
        return int(data.frame["item_id"].nunique()) if isinstance(data, JudgedSet) else len(data.frame)

    drawn = [(name, size(kept), size(full), parameter) for name, (kept, full, parameter) in sets.items()
             if size(kept) < size(full)]
    if not drawn:
        return ""
    return ("Drawn with the seed for this profile: " + "; ".join(f"{k:,} of the {n:,} {name} (`{p}`)"
                                                                for name, k, n, p in drawn)
            + ". Every table below is computed on these; `-p NAME=0` keeps a whole set.")


def pack_sentence(numbers: dict | None = None) -> str:
    """One sentence: how many of the chapter's scores were read from the stored scores released with the book (the
    score packs), how many were recomputed, the largest difference
    (:func:`metricbias.book.score_sources.chapter_numbers`; default: the running chapter's)."""
    n = numbers or score_sources.chapter_numbers()
    if not n["from_packs"]:
        return f"All {n['scores']:,} scores of this chapter were computed live."
    rest = n["scores"] - n["from_packs"]
    earlier = rest - n["computed"]  # in the score cache already: computed live by an earlier chapter or run
    return (f"Of this chapter's {n['scores']:,} scores, {n['from_packs']:,} were read from the stored scores "
            f"released with the book, checked by recomputing {n['checked']:,} of them (largest difference "
            f"{n['max_diff']:.2g})"
            + (f"; the other {rest:,} were computed live" if rest else "")
            + (f" ({earlier:,} of them earlier, read from the score cache)." if rest and earlier else "."))


def interval_text(result: dict, digits: int = 2) -> str:
    """"+0.12 (95% CI +0.03 to +0.21)" for a :func:`metricbias.bias.claims.difference_interval` or
    :func:`~metricbias.bias.claims.compare` result; a value that is not 0 but would round to it is written in
    scientific notation (a bound just above 0 must not read "+0.00")."""
    def number(v: float) -> str:
        return f"{v:+.1e}" if v != 0 and abs(v) < 0.5 * 10**-digits else f"{v:+.{digits}f}"

    return (f"{number(result['difference'])} ({result['confidence']:.0%} CI {number(result['ci_low'])} to "
            f"{number(result['ci_high'])})")


__all__ = ["drawn_sets_note", "interval_text", "left_out_note", "pack_sentence", "warning_summary"]
