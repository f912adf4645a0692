"""The Python sentence builders the book keeps (issue 41): prose lives in the chapters' Markdown, with numbers and
verdict words glued in; a function may assemble a sentence or clause of a page only where the sentence's structure
depends on the data. :data:`SENTENCE_BUILDERS` lists every such function, each with the reason; at most
:data:`LIMIT`. ``tests/test_sentence_builders.py`` holds the list to that: an AST scan of ``metricbias.book``
(:func:`text_functions`) finds every function that assembles text of :data:`MIN_WORDS` words or more, and each must
be registered here or excluded by where its text goes (:data:`NOT_PROSE`, :data:`TERMINAL_MODULES` and the calls
and keywords of :data:`EXCLUDED_CALLS` / :data:`EXCLUDED_KEYWORDS`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

LIMIT = 15
MIN_WORDS = 6

#: ``"module:function"`` (module relative to ``metricbias.book``) → why its sentence's structure depends on the data
SENTENCE_BUILDERS = {
    "reproduction.ch4_measures:elsewhere": "the '; elsewhere …' clause exists only when some but not all cases are shown",
    "reproduction.ch4_counterfactual:configurations_used": "names the left-out configurations by kind, only the kinds "
                                                          "left out",
    "reproduction.ch5_association:drawn_sets": "three different sentences: all drawn, some named ones drawn, all whole",
    "reproduction.ch5_association:identical_sentence": "a plain sentence when no configuration merges, the count "
                                                        "with its verb otherwise",
    "reproduction.ch5_oov:oov_findings": "'changes in N (tests)' or 'changes in none of them': an empty list is not "
                                         "listed",
    "reproduction.ch6_quality:both_or_each": "one word for both things when they agree, a word for each otherwise",
    "reproduction.ch8_trust:pronoun_verdict": "one sentence when both score sets agree, a contrast when they differ",
    "reproduction.notes:warning_summary": "warnings and library notices each get a clause only when caught",
    "reproduction.notes:left_out_note": "names the configurations a profile leaves out; nothing when none is",
    "reproduction.notes:drawn_sets_note": "names each drawn set with its size; nothing when every set is whole",
    "reproduction.notes:pack_sentence": "all live, or read from packs with the live remainder and cache reads as they "
                                        "occur",
    "reproduction.ch3_paradigm_claim:attribute_tally": "one verdict stated once when every attribute and the "
                                                        "average agree, each verdict with its attributes otherwise",
    "records:show": "one record per chapter in the appendix's loop: the rerun line, and a notice only where a "
                    "record is missing",
    # edited by other helpers now; registered as they are (see the merge notes of issue 41)
    "reproduction.ch3_quality:generation_gap_reading": "one of three readings of the generation quality gap",
    "reproduction.landing:reproduce_box": "the landing page's cite-and-reproduce box, with the build's record",
}

#: functions whose text is not page prose, with what it is
NOT_PROSE = {
    "display:_caption": "the legend under a table with a paper column",
    "records:link": "the link line to a chapter's appendix record",
    "reproduction.ch6_adapters:retrain_commands": "shell commands shown as code",
}
#: modules whose text goes to a terminal (command line, build log), never to a page
TERMINAL_MODULES = ("cli_book", "cli_packs", "runner", "chapter_lanes", "packs", "association_packs")
#: calls whose text arguments are error messages, command-line help, logs, axis labels or captions
EXCLUDED_CALLS = frozenset({"add_argument", "add_parser", "ArgumentParser", "warn", "SystemExit", "log", "error",
                            "warning", "info", "debug", "exception", "set_xlabel", "set_ylabel", "set_title",
                            "xlabel", "ylabel", "suptitle"})
#: keyword arguments that take a caption, a note under a table, an axis label or title, or command-line help
EXCLUDED_KEYWORDS = frozenset({"caption", "note", "help", "description", "epilog", "usage", "xlabel", "ylabel",
                               "title"})

ROOT = Path(__file__).resolve().parent


def words(text: str) -> int:
    """The words of ``text`` (whitespace-separated tokens with two letters in a row; a strftime code is none)."""
    return sum(1 for token in text.split() if re.search("[A-Za-z]{2}", token) and "%" not in token)


def _literal(node) -> str | None:
    """The literal text of an f-string, a string, a ``+`` of them, or a ``"sep".join([...])`` of literals (a formatted
    value reads as one word); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else " X " for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return None if left is None and right is None else f"{left or ' X '}{right or ' X '}"
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and node.args and isinstance(node.args[0], (ast.List, ast.Tuple))):
        parts = [_literal(e) for e in node.args[0].elts]
        return " ".join(p or " X " for p in parts) if any(p is not None for p in parts) else None
    return None


def _assembled(node) -> bool:
    """Whether ``node`` assembles text (f-string, ``+`` or ``join``) rather than being one constant string (a
    constant is a verdict word or phrase chosen as a whole)."""
    return not isinstance(node, ast.Constant)


def _excluded(node, parents: dict, function) -> bool:
    while node is not function:
        parent = parents[node]
        if isinstance(parent, ast.Raise):
            return True
        if isinstance(parent, ast.keyword) and parent.arg in EXCLUDED_KEYWORDS:
            return True
        if isinstance(parent, ast.Call):
            f = parent.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in EXCLUDED_CALLS or (name == "print" and any(k.arg == "file" for k in parent.keywords)):
                return True
        node = parent
    return False


def text_functions(root: Path = ROOT) -> dict[str, int]:
    """Every function under ``root`` that assembles text of :data:`MIN_WORDS` words or more outside the excluded
    contexts, as ``{"module:function": words}`` (module relative to ``root``, dotted); docstrings are not text."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        if module in TERMINAL_MODULES:
            continue
        tree = ast.parse(path.read_text())
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            most = 0
            for node in ast.walk(function):
                if isinstance(parents.get(node), (ast.JoinedStr, ast.BinOp)) or not _assembled(node):
                    continue  # a part of a larger text is counted with it
                text = _literal(node)
                if text is None or words(text) < MIN_WORDS or _excluded(node, parents, function):
                    continue
                most = max(most, words(text))
            if most:
                found[f"{module}:{function.name}"] = most
    return found


__all__ = ["EXCLUDED_CALLS", "EXCLUDED_KEYWORDS", "LIMIT", "MIN_WORDS", "NOT_PROSE", "SENTENCE_BUILDERS",
           "TERMINAL_MODULES", "text_functions", "words"]
