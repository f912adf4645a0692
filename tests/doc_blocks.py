"""The fenced code blocks of the project's documents (README.md, the appendices' Markdown), for the tests that run
an example as it is printed."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def code_blocks(document: str, language: str = "python") -> list[str]:
    """Every ```` ```language ```` block of ``document`` (a path from the repository root), in order; a MyST
    ``{code-cell}`` is not one."""
    text = (REPO / document).read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def code_block(document: str, *needles: str, language: str = "python", without: str | None = None) -> str:
    """The first block of ``document`` that holds every one of ``needles`` (and not ``without``)."""
    return next(b for b in code_blocks(document, language)
                if all(n in b for n in needles) and (without is None or without not in b))
