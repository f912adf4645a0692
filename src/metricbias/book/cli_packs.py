"""``metricbias pack build|verify|import``: the score packs (:mod:`metricbias.book.packs`) from the command line."""

from __future__ import annotations

import sys
from pathlib import Path


def _cmd_pack(args) -> int:
    from . import packs

    if args.pack_command == "build":
        from . import pack_plan

        entries = pack_plan.plan(args.profile, args.configs, device=args.device, sets=args.sets)
        if not entries:
            raise ValueError(f"no configuration of profile {args.profile} to pack"
                             + (f" matches --configs {args.configs}" if args.configs else ""))
        if args.dry_run:
            rows = pack_plan.estimate(entries)
            for row in rows:
                print(f"  {row['file']} ({row['text_set']}): {row['scores']:,} scores, {row['bytes'] / 1e6:.2f} MB")
            print(f"{len(rows)} files, {sum(r['scores'] for r in rows):,} scores, "
                  f"{sum(r['bytes'] for r in rows) / 1e6:.2f} MB as float64 (before compression)")
            return 0
        from ..paths import check_writable

        out = args.out or packs.default_dir()
        check_writable(out, "--out", folder=True)
        written = packs.build(entries, out, device=args.device, dtype="float32" if args.float32 else "float64")
        print(f"{len(written)} pack file(s) written to {out} ({len(entries) - len(written)} up to date)")
        return 0
    if args.pack_command == "verify":
        checked = packs.verify(args.packs, fraction=args.fraction, device=args.device)
        line = packs.outcome(checked, args.packs)  # no score checked: an error, never "0 scores checked"
        for c in checked:  # stdout keeps the one summary line
            if c.status != "verified":
                print(f"metricbias pack verify: {c.file} not checked: {c.status} ({c.note})", file=sys.stderr)
        print(line)
        return 0
    done = packs.import_packs(args.packs, fraction=args.fraction, device=args.device, log=print)
    print(packs.outcome(done, args.packs))
    return 0


def _fraction(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], not {value}")
    return value


def add_parser(sub) -> None:
    """The ``pack`` command and its subcommands, on the CLI's subparsers ``sub``."""
    from .packs import MIN_FRACTION

    p = sub.add_parser("pack", help="score packs: build the slow configurations' scores, verify them, import them")
    psub = p.add_subparsers(dest="pack_command", required=True)
    b = psub.add_parser("build", help="score the slow configurations of a profile on its whole text sets, "
                                      "one file per configuration x text set")
    b.add_argument("--profile", default="full", help="the profile whose configurations and data are packed")
    b.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    b.add_argument("--configs", default=None,
                   help="comma-separated labels or registry names among the slow configurations (default: all of "
                        "them; 'pll': the PLL scores)")
    b.add_argument("--sets", default=None,
                   help="comma-separated text sets (default: every one the profile's chapters score; --dry-run lists "
                        "them in the file names)")
    b.add_argument("--float32", action="store_true", help="store scores as float32 (half the size; default float64)")
    b.add_argument("--out", type=Path, default=None, help="folder of the pack files (default models/packs)")
    b.add_argument("--dry-run", action="store_true", help="list the files and their sizes; score nothing")
    # a literal % in a help text is %% (argparse formats help texts with %)
    for name, helptext in (("verify", f"recompute a seeded sample of every pack (at least {MIN_FRACTION:.0%}% and "
                                      "32 scores of each) and compare; imports nothing"),
                           ("import", "check the packs and import them into the score cache (metricbias run "
                                      "does it before the chapters)")):
        v = psub.add_parser(name, help=helptext)
        v.add_argument("--packs", type=Path, default=None, help="folder of the pack files (default models/packs)")
        v.add_argument("--fraction", type=_fraction, default=MIN_FRACTION,
                       help=f"fraction of each pack's scores to recompute (default {MIN_FRACTION}; at least 32)")
        v.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    for parser in psub.choices.values():
        parser.set_defaults(func=_cmd_pack)
