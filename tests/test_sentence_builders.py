"""Issue 41: prose lives in the chapters' Markdown; a Python function assembles a sentence of a page only where the
sentence's structure depends on the data, each such function is registered in
``metricbias.book.sentence_builders.SENTENCE_BUILDERS`` with its reason, there are at most 15, and each has a test
that calls it."""

import ast
from pathlib import Path

import pytest

from metricbias.book import sentence_builders as sb

TESTS = Path(__file__).resolve().parent


def test_at_most_fifteen_sentence_builders_each_with_a_reason():
    assert len(sb.SENTENCE_BUILDERS) <= sb.LIMIT == 15
    assert all(len(reason.split()) >= 5 for reason in sb.SENTENCE_BUILDERS.values())


def test_every_function_that_assembles_page_text_is_registered_or_excluded():
    found = sb.text_functions()
    unregistered = sorted(set(found) - set(sb.SENTENCE_BUILDERS) - set(sb.NOT_PROSE))
    assert not unregistered, (f"these functions assemble text of {sb.MIN_WORDS}+ words: move the sentence into the "
                              f"chapter's Markdown and glue the values, or register the function: {unregistered}")
    # the exclusions stay few and each still excludes something
    assert len(sb.NOT_PROSE) <= 6 and set(sb.NOT_PROSE) <= set(found)


def test_registered_builders_exist():
    import importlib

    for entry in sb.SENTENCE_BUILDERS:
        module, function = entry.split(":")
        assert callable(getattr(importlib.import_module(f"metricbias.book.{module}"), function)), entry


def _calls_in_tests() -> set[tuple[str, str]]:
    """Every ``(module, function)`` of ``metricbias.book`` that a test file calls, through a module imported under
    any name (``from metricbias.book.reproduction import ch4_measures as ms`` … ``ms.elsewhere(...)``) or a function
    imported by name."""
    found = set()
    for path in TESTS.glob("test_*.py"):
        tree = ast.parse(path.read_text())
        modules, functions = {}, {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("metricbias.book"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    modules[alias.asname or alias.name] = full
                    functions[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("metricbias.book") and alias.asname:
                        modules[alias.asname] = alias.name
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in modules:
                found.add((modules[f.value.id], f.attr))
            elif isinstance(f, ast.Name) and f.id in functions:
                found.add(functions[f.id])
    return found


def test_every_registered_builder_has_a_test_that_calls_it():
    calls = _calls_in_tests()
    uncalled = [e for e in sb.SENTENCE_BUILDERS
                if (f"metricbias.book.{e.split(':')[0]}", e.split(":")[1]) not in calls]
    assert not uncalled, f"no test calls {uncalled}"


def _scan(tmp_path, source: str) -> dict:
    (tmp_path / "m.py").write_text(source)
    return sb.text_functions(tmp_path)


def test_the_scan_finds_a_sentence_and_leaves_errors_help_and_captions(tmp_path):
    source = '''
def sentence(n):
    return f"Every one of the {n} cells runs on the whole set."

def joined(names):
    return "Left out of this chapter: " + ", ".join(names) + " to keep it short."

def verdict(x):
    return "is not distinguishable at this size" if x else "holds"

def error(n):
    raise ValueError(f"the value {n} is not one of the allowed values here")

def help_(parser, n):
    parser.add_argument("--n", help=f"how many of the {n} cells run in this chapter")

def caption(frame, n):
    return table(frame, caption=f"The {n} cells of this chapter with their intervals.")
'''
    assert _scan(tmp_path, source) == {"m:sentence": 10, "m:joined": 9}


@pytest.mark.parametrize("text, words", [("the bias of every metric", 5), ("%Y-%m-%d %H:%M", 0),
                                         ("a: b, c (d) X", 0), ("metric_name gao2022_table9", 2)])
def test_words_are_counted_as_on_a_page(text, words):
    assert sb.words(text) == words
