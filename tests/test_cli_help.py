"""`metricbias --help` lists the "audit your metric" commands apart from the "build the book" ones."""

import argparse

from metricbias import cli


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
