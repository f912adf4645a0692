"""``metricbias``: the command line. Every command calls the library; nothing lives only here."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path


def _cmd_fetch(args) -> int:
    from . import sources

    if args.check:
        bad = 0
        for path, status, where in sources.check():
            print(f"{status:8s} {path}" + (f"  ({where})" if where else ""))
            bad += status != "ok"
        if bad:
            print(f"{bad} source(s) not ok; run `metricbias fetch` to copy or download them", file=sys.stderr)
        return 1 if bad else 0
    done = sources.fetch_all()
    print(f"{len(done)} source(s) present and verified in {sources.raw_dir()}")
    return 0


def _cmd_bias(args) -> int:
    from .bias.pairwise import bias_table
    from .datasets import published
    from .paths import write_csv_atomic

    if args.dataset != "published" or args.scores != "published":
        raise SystemExit(
            f"metricbias bias: --dataset {args.dataset} --scores {args.scores} is not available; "
            "supported: --dataset published --scores published"
        )
    scores = published.scores(args.attributes, args.metrics.split(",") if args.metrics else None)
    table = bias_table(scores, n_resamples=args.n_resamples, seed=args.seed)
    out = write_csv_atomic(table, args.out)
    print(f"wrote {len(table)} rows ({table['attribute'].nunique()} attributes x {table['metric'].nunique()} metrics) to {out}")
    return 0


def _cmd_build_datasets(args) -> int:
    import time

    from .datasets import built

    start = time.perf_counter()
    summary = built.build(args.attributes, args.out)
    elapsed = time.perf_counter() - start
    for row in summary.itertuples():
        print(f"{row.attribute:22s} {row.pairs:5d} pairs {row.excluded:5d} excluded  -> {row.path}")
    print(f"built {len(summary)} attribute(s) in {elapsed:.1f} s; exclusions with reasons in <attribute>.excluded.tsv")
    return 0


def _cmd_build_counterfactuals(args) -> int:
    from .datasets import counterfactuals

    attributes = [a.strip() for a in args.attributes.split(",") if a.strip()] if args.attributes else None
    summary = counterfactuals.write(attributes, args.out)
    for row in summary.itertuples():
        print(f"{row.attribute:14s} {row.sources:5d} sources {row.rows:6d} rows {row.excluded:4d} excluded  -> {row.path}")
    return 0


def _cmd_run(args) -> int:
    from . import runner

    runner.run(profile=args.profile, only=args.only)
    if args.build:
        index = runner.build_book()
        print(f"book built: {index}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="metricbias", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("fetch", help="copy or download every registered raw source into data/raw and verify it")
    p.add_argument("--check", action="store_true", help="only report ok / missing / corrupt for each source")
    p.set_defaults(func=_cmd_fetch)

    p = sub.add_parser("bias", help="bias (Eq. 2), bootstrap CI and stereotypical difference per attribute x metric")
    p.add_argument("--dataset", default="published", help="published")
    p.add_argument("--scores", default="published", help="published (the released per-example scores)")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all)")
    p.add_argument("--metrics", default=None, help="comma-separated metric names (default: all)")
    p.add_argument("--n-resamples", type=int, default=9999, help="bootstrap resamples (default 9999)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--out", required=True, type=Path, help="output CSV")
    p.set_defaults(func=_cmd_bias)

    p = sub.add_parser("build-datasets", help="build the paired-candidate datasets from the raw sources")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all in attributes.yml)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: data/built)")
    p.set_defaults(func=_cmd_build_datasets)

    p = sub.add_parser("build-counterfactuals",
                       help="one candidate per protected group for every built pair (groups: data/counterfactuals.yml)")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all configured)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: data/built/counterfactuals)")
    p.set_defaults(func=_cmd_build_counterfactuals)

    p = sub.add_parser("run", help="execute the chapters in _toc.yml order with papermill")
    p.add_argument("--profile", default="offline", help="offline (default), smoke or paper")
    p.add_argument("--only", action="append", help="run only this chapter (number or stem); repeatable")
    p.add_argument("--build", action="store_true", help="then build the book with jupyter-book")
    p.set_defaults(func=_cmd_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    warnings.simplefilter("default")
    try:
        return int(args.func(args) or 0)
    except (ValueError, RuntimeError, FileNotFoundError) as exc:
        print(f"metricbias {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
