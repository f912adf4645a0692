"""The reference appendix: one card per registered metric and per registered bias measure, as Markdown.

The cards are rendered from the registries at build time (:func:`metricbias.metrics.available`,
:func:`metricbias.bias.registry.table`), so a metric or measure registered in the library appears in the book
without an edit to the page. A citation that starts with a bibliography key (``"zhang2020bertscore: Zhang et
al. (2020), BERTScore"``) is set as a citation of that entry.
"""

from __future__ import annotations

import re

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


def citation(text: str, keys=frozenset()) -> str:
    """A card's citation as Markdown: a leading bibliography key among ``keys`` becomes a ``cite:p`` role on it."""
    match = _CITE_KEY.match(text or "")
    if match and match.group(1) in keys:
        return f"{_text(text[match.end():])} {{cite:p}}`{match.group(1)}`"
    return _text(text) if text else "—"


def _option(o: dict) -> str:
    choices = f", one of {', '.join(_code(c) for c in o['choices'])}" if o["choices"] else ""
    runtime = "" if o["affects_scores"] else "; run-time option"
    doc = f": {_text(o['doc'])}" if o["doc"] else ""
    return f"  - {_code(o['name'])} ({o['type']}{choices}; default {_code(repr(o['default']))}{runtime}){doc}"


def metric_card(card: dict, keys=frozenset()) -> str:
    """One metric's card (a :func:`metricbias.metrics.available` entry) as Markdown."""
    lines = [f"**{card['label']}** ({_code(card['name'])})", "", _text(card["description"] or card["label"]), "",
             f"- **Paradigm**: {card['paradigm']}; {card['direction']} is better"
             + ("; depends on the other texts of the call" if card["corpus_dependent"] else "")]
    if card["needs_backbone"]:
        kinds = " or ".join(card["backbone_kinds"])
        listed = ", ".join(_code(b) for b in card["backbones"]) or "none registered"
        lines.append(f"- **Backbones** ({kinds}): {listed}")
    else:
        lines.append("- **Backbones**: none (no model)")
    lines.append("- **Options**:" + ("" if card["options"] else " none"))
    lines += [_option(o) for o in card["options"]]
    lines.append(f"- **Citation**: {citation(card['citation'], keys)}")
    if card["limits"]:
        lines.append(f"- **Limits**: {_text(card['limits'])}")
    return "\n".join(lines)


def measure_card(row: dict) -> str:
    """One bias measure's card (a row of :func:`metricbias.bias.registry.table`) as Markdown."""
    from ...bias import registry

    measure = registry.get_measure(row["name"])
    returns = ["a value"] + (["a 95% interval"] if row["interval"] else []) + (["a p-value"] if row["test"] else [])
    options = ", ".join(_code(o) for o in measure.options) or "none"
    return "\n".join([f"**{_code(row['name'])}**", "", _text(row["description"] or row["name"]), "",
                      f"- **Takes**: {row['takes']} ({_TAKES[row['takes']]})",
                      f"- **Returns**: {', '.join(returns)}",
                      f"- **Options**: {options}",
                      f"- **Citation**: {_text(row['citation'] or '—')}"])


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


def metric_cards(keys=None) -> str:
    """Every registered metric's card, in registry order, as one Markdown text."""
    from ... import metrics

    keys = bibliography_keys() if keys is None else keys
    return "\n\n".join(metric_card(card, keys) for card in metrics.available())


def measure_cards() -> str:
    """Every registered bias measure's card, in registry order, as one Markdown text."""
    from ...bias import registry

    return "\n\n".join(measure_card(row) for row in registry.table().to_dict("records"))


__all__ = ["bibliography_keys", "citation", "measure_card", "measure_cards", "metric_card", "metric_cards"]
