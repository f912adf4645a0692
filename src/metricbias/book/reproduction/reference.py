"""The reference appendix: one card per registered metric and per registered bias measure, as Markdown.

The cards are rendered from the registries at build time (:func:`metricbias.metrics.available`,
:func:`metricbias.bias.registry.table`), so a metric or measure registered in the library appears in the book
without an edit to the page. A citation that starts with a bibliography key (``"zhang2020bertscore: Zhang et
al. (2020), BERTScore"``) is set as a citation of that entry, and every author–year mention of an entry in a card
("Sentence BLEU (Papineni et al., 2002)") as a citation of it (:mod:`.citations`).
"""

from __future__ import annotations

import re

from .citations import author_year_index, cite_mentions

#: ``key: text`` at the start of a citation: a key of the book's bibliography
_CITE_KEY = re.compile(r"^([a-z][a-z-]*\d{4}[a-z0-9]*):\s*")


def _code(text) -> str:
    """``text`` as inline code (a value with a backtick in double backticks, so that it cannot end the code)."""
    text = str(text)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _text(text) -> str:
    """A card's prose as Markdown text: ``<`` and ``>`` outside code escaped, so that a tag-like word (PRISM's
    ``<en>``) is shown as written and does not open raw HTML that swallows the rest of the card."""
    parts = re.split(r"(`+[^`]*`+)", str(text))
    return "".join(part if part.startswith("`") else part.replace("<", "\\<").replace(">", "\\>")
                   for part in parts)


def _prose(text, index=None) -> str:
    """A card's prose: tag-like words escaped (:func:`_text`), author–year mentions set as citations."""
    return _text(cite_mentions(text, index)) if text else ""


def citation(text: str, keys=frozenset(), index=None) -> str:
    """A card's citation as Markdown: a leading bibliography key among ``keys`` becomes a ``cite:p`` role on it
    (unless the text already cites it), and the author–year mentions of the entries of ``index``
    (:func:`.citations.author_year_index`) become citation roles."""
    match = _CITE_KEY.match(text or "")
    if match and match.group(1) in keys:
        body = _prose(text[match.end():], index)
        return body if f"`{match.group(1)}`" in body else f"{body} {{cite:p}}`{match.group(1)}`"
    return _prose(text, index) or "—"


def _option(o: dict, index=None) -> str:
    choices = f", one of {', '.join(_code(c) for c in o['choices'])}" if o["choices"] else ""
    runtime = "" if o["affects_scores"] else "; run-time option"
    doc = f": {_prose(o['doc'], index)}" if o["doc"] else ""
    return f"  - {_code(o['name'])} ({o['type']}{choices}; default {_code(repr(o['default']))}{runtime}){doc}"


def metric_card(card: dict, keys=frozenset(), index=None) -> str:
    """One metric's card (a :func:`metricbias.metrics.available` entry) as Markdown; ``index`` sets its
    author–year mentions as citations (:func:`.citations.author_year_index`)."""
    lines = [f"**{card['label']}** ({_code(card['name'])})", "", _prose(card["description"], index) or card["label"], "",
             f"- **Paradigm**: {card['paradigm']}; {card['direction']} is better"
             + ("; depends on the other texts of the call" if card["corpus_dependent"] else "")]
    if card["needs_backbone"]:
        kinds = " or ".join(card["backbone_kinds"])
        listed = ", ".join(_code(b) for b in card["backbones"]) or "none registered"
        lines.append(f"- **Backbones** ({kinds}): {listed}")
    else:
        lines.append("- **Backbones**: none (no model)")
    lines.append("- **Options**:" + ("" if card["options"] else " none"))
    lines += [_option(o, index) for o in card["options"]]
    lines.append(f"- **Citation**: {citation(card['citation'], keys, index)}")
    if card["limits"]:
        lines.append(f"- **Limits**: {_prose(card['limits'], index)}")
    return "\n".join(lines)


def measure_card(row: dict, index=None) -> str:
    """One bias measure's card (a row of :func:`metricbias.bias.registry.table`) as Markdown; ``index`` sets its
    author–year mentions as citations."""
    from ...bias import registry

    measure = registry.get_measure(row["name"])
    returns = ["a value"] + (["a 95% interval"] if row["interval"] else []) + (["a p-value"] if row["test"] else [])
    options = ", ".join(_code(o) for o in measure.options) or "none"
    return "\n".join([f"**{_code(row['name'])}**", "", _prose(row["description"], index) or row["name"], "",
                      f"- **Takes**: {row['takes']} ({_TAKES[row['takes']]})",
                      f"- **Returns**: {', '.join(returns)}",
                      f"- **Options**: {options}",
                      f"- **Citation**: {_prose(row['citation'], index) or '—'}"])


#: what a measure of each kind receives, in the words of :mod:`metricbias.bias.registry`
_TAKES = {"pairs": "the two candidates' scores, pair by pair",
          "distributions": "the two candidates' score sets, their pairing ignored",
          "groups": "the long table source, group, score of the generalized fairness metrics"}


def bibliography_keys(path=None) -> frozenset:
    """The entry keys of the book's bibliography (``book/references.bib``; empty when there is none)."""
    from ...paths import project_root

    path = path or project_root() / "book" / "references.bib"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return frozenset()
    return frozenset(re.findall(r"@\w+\s*\{\s*([^,\s]+)\s*,", text))


def metric_cards(keys=None, index=None) -> str:
    """Every registered metric's card, in registry order, as one Markdown text (``keys``, ``index``: the
    bibliography's, by default)."""
    from ... import metrics

    keys = bibliography_keys() if keys is None else keys
    index = author_year_index() if index is None else index
    return "\n\n".join(metric_card(card, keys, index) for card in metrics.available())


def measure_cards(index=None) -> str:
    """Every registered bias measure's card, in registry order, as one Markdown text (``index``: the
    bibliography's, by default)."""
    from ...bias import registry

    index = author_year_index() if index is None else index
    return "\n\n".join(measure_card(row, index) for row in registry.table().to_dict("records"))


__all__ = ["bibliography_keys", "citation", "measure_card", "measure_cards", "metric_card", "metric_cards"]
