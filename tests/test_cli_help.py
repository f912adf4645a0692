"""`metricbias --help` lists the "audit your metric" commands apart from the "build the book" ones, and every
help page, nested ones included, renders clean."""

import argparse

import pytest

from metricbias import cli

#: what argparse prints of itself when a help text trips its %-formatting (a bare %): an action's fields
INTERNALS = ("option_strings", "object at 0x", "%(", "_SubParsersAction", "Namespace(", "{'", "Traceback")


def _registered() -> list[str]:
    parser = cli.build_parser()
    sub, = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def test_every_registered_command_is_in_one_group():
    grouped = [n for names in cli.COMMAND_GROUPS.values() for n in names]
    assert len(grouped) == len(set(grouped)), "a command is in two groups"
    assert sorted(grouped) == sorted(_registered())


def test_help_lists_each_command_under_its_group(capsys):
    assert cli.main(["--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    headings = {f"{group}:": group for group in cli.COMMAND_GROUPS}
    where, group = {}, None
    for line in lines:
        if line.strip() in headings:
            group = headings[line.strip()]
        elif group and line.startswith("    ") and not line.startswith("     "):
            where[line.split()[0]] = group
    assert where == {n: g for g, names in cli.COMMAND_GROUPS.items() for n in names}
    assert where["audit"] == "audit your metric" and where["train"] == "build the book"


def _pages(parser, path=()):
    """``(command words, parser)`` of the parser and of every subcommand under it, depth first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _pages(sub, (*path, name))


def test_every_help_page_renders_clean(capsys):
    pages = [path for path, _ in _pages(cli.build_parser())]
    assert {("pack", "build"), ("pack", "verify"), ("pack", "import"), ("adapters", "train"), ("run",)} <= set(pages)
    for path in pages:
        words = " ".join(("metricbias", *path))
        try:
            status = cli.main([*path, "--help"])
        except Exception as exc:  # noqa: BLE001 - what a reader would see as a traceback
            pytest.fail(f"`{words} --help` raised {type(exc).__name__}: {exc}")
        out, err = capsys.readouterr()
        assert status == 0 and not err, f"`{words} --help`: status {status}, stderr {err!r}"
        assert out.startswith(f"usage: {words}"), f"`{words} --help` starts {out[:80]!r}"
        shown = [s for s in INTERNALS if s in out]
        assert not shown, f"`{words} --help` prints argparse's internals ({shown}):\n{out}"
