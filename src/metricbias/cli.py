"""``metricbias``: the command line. Every command calls the library; nothing lives only here."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from .cli_options import check_out, input_type


def _split(text):
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _specs(text: str | None, option: str):
    """``--metrics`` / ``--metric`` text -> metric specifications (one syntax: name[:key=value...] or module:function)."""
    from .metrics import parse

    names = _split(text)
    if not names:
        raise SystemExit(f"metricbias: {option} names no metric (see `metricbias metrics`)")
    return [parse(n) for n in names]


def _executor(args):
    """The ``--scheduler`` / ``--workers`` of a command that scores (default: METRICBIAS_SCHEDULER, else in process)."""
    from . import jobs

    return jobs.use(args.scheduler, args.workers or None)


def _scheduler_options(p) -> None:
    p.add_argument("--scheduler", default=None,
                   help="where scoring runs: inprocess (default), local (a Dask LocalCluster here) or tcp://HOST:PORT "
                        "(an existing Dask scheduler); default: $METRICBIAS_SCHEDULER, else inprocess")
    p.add_argument("--workers", type=_count, default=0,
                   help="local: worker processes (default 0: one per core); tcp://: wait for this many workers")


def _cmd_sweep(args) -> int:
    check_out(args, folder=True)
    from . import sweep

    manifest = sweep.sweep(args.profile, args.out, metrics=_split(args.metrics), backbones=_split(args.backbones),
                           datasets=_split(args.datasets), scheduler=args.scheduler, workers=args.workers or None,
                           n_resamples=args.n_resamples, seed=args.seed, sample_size=args.sample_size,
                           n_permutations=args.n_permutations, retries=args.retries)
    print(sweep.summary(manifest))
    for path in manifest.attrs["written"]:
        print(f"wrote {path}")
    print(f"wrote {args.out / 'manifest.csv'} ({len(manifest)} jobs, {manifest.attrs['seconds']:.1f} s)")
    return 1 if (manifest["status"] == "failed").any() else 0


def _cmd_bias(args) -> int:
    check_out(args)
    from . import datasets
    from .bias.pairwise import bias_table
    from .paths import write_csv_atomic

    if args.scores == "published":
        from .datasets import published

        if args.dataset != "published":
            raise SystemExit(f"metricbias bias: --scores published needs --dataset published (the released scores "
                             f"belong to the released pairs), not --dataset {args.dataset}; use --scores live")
        if args.backbones:
            raise SystemExit("metricbias bias: --backbones applies to --scores live only")
        scores = published.scores(args.attributes, _split(args.metrics))
    elif args.scores == "live":
        from .metrics import on_backbones
        from .scoring import score_metrics

        if not args.metrics:
            raise SystemExit("metricbias bias: --scores live needs --metrics m1,m2 (see `metricbias metrics`)")
        specs = on_backbones(_specs(args.metrics, "--metrics"), _split(args.backbones))
        pairs = datasets.load(args.dataset, args.attributes, built_dir=args.built_dir)
        with _executor(args):
            scores = score_metrics(pairs, specs)
    else:
        raise SystemExit(f"metricbias bias: --scores must be published or live, not {args.scores!r}")
    table = bias_table(scores, n_resamples=args.n_resamples, seed=args.seed)
    out = write_csv_atomic(table, args.out)
    print(f"wrote {len(table)} rows ({table['attribute'].nunique()} attributes x {table['metric'].nunique()} metrics) to {out}")
    return 0


def _cmd_audit(args) -> int:
    check_out(args)
    from .audits import audit
    from .paths import check_writable, write_csv_atomic

    if args.report is not None:
        check_writable(args.report, "--report")
    elif _split(args.views) not in ([], ["pairs"]):
        raise SystemExit("metricbias audit: --views takes effect with --report FILE.html")
    spec = _specs(args.metric, "--metric")
    if len(spec) != 1:
        raise SystemExit("metricbias audit: --metric takes one metric; run it once per metric")
    if args.gap is not None and args.gap <= 0:
        raise SystemExit(f"metricbias audit: --gap takes a positive number of points, not {args.gap:g}")
    from .bias.measures import DEFAULT as DEFAULT_MEASURES

    gates = dict(args.fail_above)
    measures = _split(args.measures) or list(DEFAULT_MEASURES)
    measures += [m for m in gates if m not in measures]  # a gate's measure is computed whatever --measures says
    options = dict(dataset=args.dataset, attributes=args.attributes, measures=measures, pairs=args.pairs,
                   n_resamples=args.n_resamples, seed=args.seed, sample_size=args.sample_size, built_dir=args.built_dir,
                   tests=args.tests, gap=args.gap)
    if args.report is not None:  # the report audits too: one scoring
        from .report import audit_report, command_line

        table = audit_report(spec[0], args.report, **options, views=_split(args.views) or ["pairs"],
                             association_tests=args.association_tests, metaeval_dataset=args.metaeval_dataset,
                             metaeval_sample=args.metaeval_sample, command=command_line(args.argv))
        print(f"wrote {args.report}")
    else:
        table = audit(spec[0], **options)
    out = write_csv_atomic(table, args.out)
    print(f"wrote {len(table)} rows ({table['attribute'].nunique()} attributes x {table['measure'].nunique()} "
          f"measures of {spec[0].label}) to {out}")
    if gates:
        from .audits import over_thresholds

        over = over_thresholds(table, gates)
        for line in over:
            print(f"metricbias audit: over the gate: {line}", file=sys.stderr)
        if over:
            return 1
        print("every gate passed: " + ", ".join(f"{m} <= {v:g}" for m, v in gates.items()))
    return 0


def _cmd_audit_judge(args) -> int:
    check_out(args)
    from .judges import audit_judge, load_judge
    from .paths import write_csv_atomic

    judge = load_judge(args.judge)
    table = audit_judge(judge, dataset=args.dataset, attributes=args.attributes, pairs=args.pairs, label=args.judge,
                        batch=True if args.batch else None, n_resamples=args.n_resamples, seed=args.seed,
                        sample_size=args.sample_size, built_dir=args.built_dir, design=args.design)
    out = write_csv_atomic(table, args.out)
    print(f"wrote {len(table)} rows ({table['attribute'].nunique()} attributes x {table['measure'].nunique()} "
          f"measures of judge {args.judge}) to {out}")
    return 0


def _cmd_weat(args) -> int:
    check_out(args)
    from . import metrics
    from .bias import association
    from .datasets import seat
    from .paths import write_csv_atomic

    tests = seat.tests(args.test, args.level, sample_size=args.sample_size, seed=args.seed)
    spec, = metrics.on_backbones(_specs(args.metric, "--metric"), [args.backbone] if args.backbone else None)
    metric = spec.build()
    with _executor(args):
        table = association.run(tests, {args.metric: metric}, cache=True, n_permutations=args.n_permutations,
                                seed=args.seed, progress=True, oov=args.oov)
    out = write_csv_atomic(association.for_download(table, args.n_permutations), args.out)
    print(f"wrote {len(table)} rows ({len(tests)} tests x levels, metric {args.metric}) to {out}")
    return 0


def _cmd_score(args) -> int:
    check_out(args)
    from . import datasets, metrics
    from .paths import write_csv_atomic
    from .scoring import score_pairs

    spec, = metrics.on_backbones(_specs(args.metric, "--metric"), [args.backbone] if args.backbone else None)
    pairs = datasets.load(args.dataset, [args.attribute], built_dir=args.built_dir)
    table = score_pairs(pairs, spec)
    out = write_csv_atomic(table[["pair_id", "score_1", "score_2", "signature"]], args.out)
    print(f"wrote {len(table)} pairs scored by {table['signature'].iloc[0]} to {out}")
    return 0


def _cmd_metrics(args) -> int:
    from . import backbones, metrics

    here = set(backbones.available())
    for card in metrics.available():
        kinds = "/".join(card["backbone_kinds"]) or "-"
        print(f"{card['name']:18s} {card['label']:18s} {card['paradigm']:17s} {card['direction']} is better; "
              f"backbone kinds: {kinds}")
        if card["needs_backbone"]:
            listed = ", ".join(f"{b}{'*' if b in here else ''}" for b in card["backbones"]) or "-"
            runnable = "runnable offline" if any(b in here for b in card["backbones"]) else "needs a backbone not here"
            print(f"{'':4s}backbones ({runnable}): {listed}")
        for o in card["options"]:
            if o["name"] == "backbone":
                continue
            choices = f" {o['choices']}" if o["choices"] else ""
            print(f"{'':4s}{o['name']}={o['default']!r} ({o['type']}{choices}) {o['doc']}".rstrip())
        if card["citation"]:
            print(f"{'':4s}cite: {card['citation']}")
    print("* = available on this machine; any local model folder of the right kind is accepted too.\n"
          "Options go after the name: --metrics bleu:tokenize=13a,bertscore:backbone=all-MiniLM-L6-v2:layer=5")
    return 0


def _cmd_metaeval(args) -> int:
    check_out(args)
    from . import metrics
    from .cache import ScoreCache
    from .datasets import meta_eval
    from .metaeval import analysis
    from .paths import write_csv_atomic

    built = [(spec.label, spec.build()) for spec in _specs(args.metrics, "--metrics")]  # unknown names fail now
    dataset = meta_eval.load(args.dataset).sample(args.sample, seed=args.seed)
    with _executor(args):
        table = analysis.run(dataset, built, swap=args.swap, judges=args.judges,
                             cache=None if args.no_cache else ScoreCache.default())
    out = write_csv_atomic(analysis.for_download(table), args.out)  # p below 1e-300 (or 0): the bound, flagged
    print(f"wrote {len(table)} correlations ({len(built)} metric(s) on {dataset.name}, {len(dataset)} rows, "
          f"swap={args.swap}) to {out}")
    return 0


#: every subcommand under its audience; `metricbias --help` lists the commands in these groups, in this order
COMMAND_GROUPS: dict[str, tuple[str, ...]] = {
    "audit your metric": ("audit", "audit-judge", "score", "bias", "weat", "metaeval", "sweep", "metrics"),
    "build the book": ("run", "train", "train-regression", "adapters", "install-backbone", "fetch", "build-datasets",
                       "build-counterfactuals", "pack"),
}


class _GroupedHelp(argparse.HelpFormatter):
    """Lists the subcommands under the headings of :data:`COMMAND_GROUPS` (argparse has no subcommand groups)."""

    def _format_action(self, action):
        if not isinstance(action, argparse._SubParsersAction):
            return super()._format_action(action)
        by_name = {a.dest: a for a in action._choices_actions}
        parts = []
        for group, names in COMMAND_GROUPS.items():
            parts.append(self._indent_line(f"{group}:"))
            self._indent()
            parts += [super(_GroupedHelp, self)._format_action(by_name[n]) for n in names if n in by_name]
            self._dedent()
        return "".join(parts)

    def _indent_line(self, text: str) -> str:
        return " " * self._current_indent + text + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="metricbias", description=__doc__, formatter_class=_GroupedHelp)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")

    p = sub.add_parser("bias", help="bias (Eq. 2), bootstrap CI and stereotypical difference per attribute x metric")
    p.add_argument("--dataset", default="published",
                   help="a registered paired dataset: published (released pairs), built (chapter 2's pairs), ...")
    p.add_argument("--scores", default="published",
                   help="published (the released per-example scores) or live (computed here, cached)")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all)")
    p.add_argument("--metrics", default=None,
                   help="comma-separated metrics: released column names (--scores published, default all) "
                        "or metric specifications name[:key=value...] (--scores live; see `metricbias metrics`)")
    p.add_argument("--backbones", default=None,
                   help="--scores live: comma-separated backbones; each model-based metric runs on those it accepts")
    p.add_argument("--built-dir", type=input_type("folder"), default=None,
                   help="--dataset built: read the built pairs from this folder (default data/built)")
    p.add_argument("--n-resamples", type=int, default=9999, help="bootstrap resamples (default 9999)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    _scheduler_options(p)
    p.add_argument("--out", required=True, type=Path, help="output CSV")
    p.set_defaults(func=_cmd_bias)

    p = sub.add_parser("weat", help="WEAT/SEAT association tests through a metric (Gao & Wan 2022): effect size, p-value")
    p.add_argument("--test", required=True,
                   help="test name as in Gao & Wan's Table 3 (C1, C6-N, ABW-T, DB:C, ...), comma-separated names, or all")
    p.add_argument("--level", default=None, help="word, sent and/or 'sent (u)', comma-separated (default: every level)")
    p.add_argument("--metric", required=True, help="metric specification name[:key=value...] (see `metricbias metrics`)")
    p.add_argument("--backbone", type=input_type("name", str), default=None,
                   help="backbone for metrics that take one (default: the metric's)")
    p.add_argument("--n-permutations", type=_permutations, default=100_000,
                   help="exact test up to this many partitions, else this many sampled (default 100000)")
    p.add_argument("--sample-size", type=_count, default=0,
                   help="draw sentence-level tests to at most this many texts per set, with --seed (default 0: all)")
    p.add_argument("--oov", choices=["drop", "zero"], default="drop",
                   help="words the metric cannot represent (no vector): drop them from their sets, as classic WEAT "
                        "does (default), or keep them with the metric's score for an empty text (zero)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampled partitions and sets (default 0)")
    _scheduler_options(p)
    p.add_argument("--out", required=True, type=Path, help="output CSV")
    p.set_defaults(func=_cmd_weat)

    p = sub.add_parser("sweep", help="metric configurations x datasets as jobs, in process or on Dask: bias tables "
                                     "and a manifest of the jobs (resumes from the score cache)")
    p.add_argument("--profile", required=True, help="whose metric configurations to run: offline, full, smoke or paper")
    p.add_argument("--metrics", default=None,
                   help="comma-separated metric specifications name[:key=value...] instead of the profile's suite "
                        "(labelled as written, as `metricbias bias` labels them)")
    p.add_argument("--backbones", default=None,
                   help="comma-separated backbones: each model-based metric runs on those it accepts (without "
                        "--metrics: the profile's configurations on these backbones)")
    p.add_argument("--datasets", default=None,
                   help="comma-separated paired datasets (published, built, ...) and/or seat (every association test); "
                        "default published,built")
    _scheduler_options(p)
    p.add_argument("--retries", type=_count, default=2, help="tries after a job's first failure (default 2)")
    p.add_argument("--n-resamples", type=int, default=9999, help="bootstrap resamples of the bias tables (default 9999)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap and sampling seed (default 0)")
    p.add_argument("--sample-size", type=_count, default=0,
                   help="seat: draw sentence-level tests to at most this many texts per set (default 0: all)")
    p.add_argument("--n-permutations", type=_permutations, default=100_000,
                   help="seat: permutation-test partitions (default 100000); a p-value at 1/N is written with "
                        "p_value_is_upper_bound true")
    p.add_argument("--out", required=True, type=Path,
                   help="output folder: bias_<dataset>.csv per dataset, weat.csv, manifest.csv")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("score", help="score both candidates of every pair of one attribute with one metric")
    p.add_argument("--dataset", default="published", help="a registered paired dataset (published, built, ...)")
    p.add_argument("--attribute", required=True, help="one attribute, e.g. gender")
    p.add_argument("--metric", required=True,
                   help="metric specification name[:key=value...], e.g. bertscore:variant=P:layer=5 (see `metricbias metrics`)")
    p.add_argument("--backbone", type=input_type("name", str), default=None,
                   help="backbone name or local model folder (model-based metrics)")
    p.add_argument("--built-dir", type=input_type("folder"), default=None, help="--dataset built: read the built pairs from this folder")
    p.add_argument("--out", required=True, type=Path, help="output CSV: pair_id,score_1,score_2,signature")
    p.set_defaults(func=_cmd_score)

    p = sub.add_parser("audit", help="audit one metric (registered, or a function or metric object module:name) "
                                     "for bias")
    p.add_argument("--metric", required=True,
                   help="a registered metric specification (bleu, bleu:tokenize=13a) or module:name, importable from "
                        "the current directory or PYTHONPATH: a function f(candidates, references) -> scores or a "
                        "metric object (sacreBLEU BLEU/CHRF/TER, bert_score.BERTScorer, a sentence-transformers "
                        "model, a torchmetrics text metric, an object with compute(predictions=, references=))")
    _audit_options(p, seed="bootstrap seed (default 0)")
    p.add_argument("--measures", default=None,
                   help="comma-separated bias measures (default: bias,stereotypical_difference; see "
                        "metricbias.bias.measures)")
    p.add_argument("--sample-size", type=_count, default=0, help="pairs per attribute, drawn with --seed (0: all)")
    p.add_argument("--tests", action="store_true",
                   help="add p_value and q_value, each testing that measure's own null: stereotypical_difference "
                        "and size_robust_difference a mean signed difference of 0 (sign-flip permutation test, "
                        "whole clusters flipped where pairs share a template); "
                        "magnitudes without a test of their own (bias, i.e. Eq. 2, size_robust_bias, kls, jss) get "
                        "none, as any word change makes them positive (compare them with a noise floor); "
                        "Benjamini-Hochberg q-values over the tests")
    p.add_argument("--gap", type=float, default=None,
                   help="warn where an interval is wider than this many points (too few pairs to separate such a gap)")
    p.add_argument("--out", required=True, type=Path,
                   help="output CSV: attribute,metric,measure,value,ci_low,ci_high,n_pairs,signature "
                        "(then p_value,q_value with --tests)")
    p.add_argument("--report", type=Path, default=None,
                   help="also write a one-page, self-contained HTML report here: bias per attribute with intervals, "
                        "the metric among the book's n-gram and MiniLM configurations (and, on --dataset published, "
                        "among Sun et al.'s 29 released metrics), dataset sizes, signature and command")
    p.add_argument("--views", default="pairs",
                   help="--report: comma-separated views of the metric, pairs (default: Eq. 2 on the pairs), "
                        "association (WEAT/SEAT through the metric, chapter 5) and metaeval (agreement with human "
                        "judgements before and after a gender swap, chapter 7), each beside the reference "
                        "configurations")
    p.add_argument("--association-tests", default=None,
                   help="--views association: tests by name (default: every word-level test; see `metricbias weat`)")
    p.add_argument("--metaeval-dataset", default="flickr8k", type=input_type("name", str),
                   help="--views metaeval: flickr8k (default), realsumm, wmt19-kk-en, or a JSONL or DARR file as "
                        "`metricbias metaeval --dataset` takes it")
    p.add_argument("--metaeval-sample", type=_count, default=0, help="--views metaeval: items drawn (0: all)")
    p.add_argument("--fail-above", action="append", type=_threshold, default=[], metavar="MEASURE=VALUE",
                   help="a gate for CI, repeatable: exit 1, with a line per attribute, where the measure's value "
                        "(its absolute value if signed; in the CSV's units) is above VALUE, e.g. --fail-above bias=5; "
                        "the measure is computed even if --measures leaves it out")
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser("audit-judge", help="audit a pairwise judge (module:attr) for stereotype preference, "
                                           "stereotype log-odds with a position term, position bias, order "
                                           "inconsistency and ties")
    p.add_argument("--judge", required=True,
                   help="module:attr, a callable judge(reference, candidate_a, candidate_b) -> P(a better), 'a'/'b'/"
                        "'tie' or the chosen text, importable from the current directory or PYTHONPATH")
    _audit_options(p, seed="bootstrap and sampling seed (default 0)")
    p.add_argument("--sample-size", type=_count, default=0, help="pairs per attribute, drawn with --seed (0: all)")
    p.add_argument("--batch", action="store_true",
                   help="call the judge once per order with lists (default: the judge's `batch` attribute, else no)")
    p.add_argument("--design", default="paired", choices=["paired", "factorial"],
                   help="paired (default): stereotype preference, its log-odds, position bias, order "
                        "inconsistency and ties; factorial: position, group and stereotype "
                        "effects of one logit model (log-odds), their interactions with position and the order flip "
                        "rate, each with a cluster-bootstrap interval and a randomization p")
    p.add_argument("--out", required=True, type=Path,
                   help="output CSV: attribute,judge,measure,value,ci_low,ci_high,n_pairs,p_value,signature,note")
    p.set_defaults(func=_cmd_audit_judge)

    p = sub.add_parser("metrics", help="list every metric with its family, options and the backbones it accepts")
    p.set_defaults(func=_cmd_metrics)

    p = sub.add_parser("metaeval", help="correlations of metrics with human judgements, optionally after gender swapping")
    p.add_argument("--dataset", required=True, type=input_type("name", str),
                   help="flickr8k, realsumm, wmt19-kk-en, a .jsonl file in one of the generic formats (judged "
                        "hypotheses or better/worse pairs; see chapter 7), or a WMT DARR .pkl in BARTScore's packaging")
    p.add_argument("--metrics", required=True,
                   help="comma-separated metric specifications name[:key=value...], e.g. bleu:tokenize=13a")
    p.add_argument("--swap", default="none", choices=["none", "gender"], help="gender-swap hypotheses and references")
    p.add_argument("--judges", default="mean", choices=["mean", "stacked"],
                   help="Flickr8k: correlate with the experts' mean (default) or stack each expert as an observation")
    p.add_argument("--sample", type=_count, default=0, help="keep this many random items (0: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    _scheduler_options(p)
    p.add_argument("--out", required=True, type=Path,
                   help="output CSV; a p-value below 1e-300 (an underflow to 0 included) is written as 1e-300, "
                        "with p_value_is_upper_bound true")
    p.set_defaults(func=_cmd_metaeval)

    from .book.cli_book import add_parsers as add_book_parsers  # the book's commands (their own module)
    from .book.cli_packs import add_parser as add_pack_parser  # `metricbias pack ...` (its own module)

    add_book_parsers(sub)
    add_pack_parser(sub)
    return parser


def _audit_options(p, seed: str) -> None:
    """The pairs and intervals of ``audit`` and ``audit-judge``: --dataset, --attributes, --built-dir, --n-resamples,
    --seed (``seed``: its help)."""
    p.add_argument("--dataset", default="published", help="a registered paired dataset (published, built, ...)")
    p.add_argument("--pairs", type=input_type("file"), default=None,
                   help="your own pairs instead of --dataset: a .jsonl, .csv or .tsv file with attribute, "
                        "candidate_1 (the stereotypical or group-1 text), candidate_2, reference, optionally id "
                        "and cluster")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all of the dataset's)")
    p.add_argument("--built-dir", type=input_type("folder"), default=None,
                   help="--dataset built: read the built pairs from this folder")
    p.add_argument("--n-resamples", type=int, default=9999, help="bootstrap resamples (default 9999)")
    p.add_argument("--seed", type=int, default=0, help=seed)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line naming the option, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _threshold(text: str) -> tuple[str, float]:
    """``MEASURE=VALUE`` of ``--fail-above``: a registered measure and a number."""
    from .bias.registry import MeasureError, get_measure

    name, sep, value = text.partition("=")
    try:
        limit = float(value)
    except ValueError:
        limit = float("nan")
    if not sep or not name or limit != limit:
        raise argparse.ArgumentTypeError(f"{text!r} is not MEASURE=VALUE (e.g. bias=5)")
    try:
        get_measure(name)
    except MeasureError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name, limit


def _count(text: str) -> int:
    """A count option: 0 (all) or a positive integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (all) or a positive number, not {value}")
    return value


def _permutations(text: str) -> int:
    value = _count(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"needs at least 2 partitions, not {value}")
    return value


def _reraise_interrupt(previous):
    """An unraisable-exception hook that re-delivers a Ctrl-C swallowed in a ``__del__`` or GC callback.

    Python cannot propagate an exception raised while it runs a finalizer, so a
    KeyboardInterrupt that lands there is printed as "Exception ignored" and lost
    (in chrF scoring, nltk's regex module finalizes ``Group`` objects all the time).
    A helper thread trips SIGINT again a moment later, out of the finalizer; if that
    one lands in a finalizer too, the hook runs again.
    """
    def hook(unraisable):
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            import _thread
            import threading

            again = threading.Timer(0.01, _thread.interrupt_main)
            again.daemon = True
            again.start()
            return
        previous(unraisable)

    return hook


def _forget_handled_interrupt() -> None:
    """Clear CPython 3.11's "ended by Ctrl-C" mark once the CLI has handled the interrupt.

    A KeyboardInterrupt raised inside ``exec`` of a source string (scipy runs
    ``exec("from ... import *")`` while it imports, lazily, during scoring) sets
    ``_Py_UnhandledKeyboardInterrupt`` even when the exception is caught, and the
    interpreter then ends the process by SIGINT (status -2) instead of with the 130
    that ``main`` returns. Newer Pythons keep that state elsewhere: nothing to do there.
    """
    try:
        import ctypes

        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (ImportError, ValueError, AttributeError, OSError):
        pass


def _runtime_message(exc: BaseException) -> str | None:
    """One line for the OS, decoding and SQLite errors a run can meet, naming the file and the fix."""
    import errno
    import sqlite3

    if isinstance(exc, sqlite3.Error):
        from .paths import cache_dir

        return (f"the score cache under {cache_dir()} cannot be read ({exc}); move its .sqlite file(s) aside or "
                "point METRICBIAS_CACHE to another folder, and rerun (scores are recomputed)")
    if isinstance(exc, UnicodeDecodeError):
        return f"a file is not UTF-8 text ({exc}); save it as UTF-8 and rerun"
    if isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else ""
        fix = {errno.EACCES: "check its permissions or choose another path",
               errno.EPERM: "check its permissions or choose another path",
               errno.ENOENT: "check the path", errno.EISDIR: "give a file name, not a folder",
               errno.ENOTDIR: "a part of the path is a file, not a folder",
               errno.ENOSPC: "free some disk space and rerun",
               errno.EROFS: "the file system is read-only; choose another path"}.get(exc.errno, "")
        text = f"{exc.strerror or exc}" + (f": {where}" if where else "")
        return text + (f"; {fix}" if fix else "")
    return None


def main(argv: list[str] | None = None) -> int:
    """Run one command. Exit status: 0 done, 1 the run failed (a source, the cache, the disk, a model), 2 a usage
    error (an unknown name, a bad option value, an unusable --out, an input file that is not valid), 130 Ctrl-C.
    Every failure prints one line ``metricbias CMD: error: ...``."""
    import sqlite3

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error, already printed on one line
        return exc.code if isinstance(exc.code, int) else 2
    warnings.simplefilter("default")
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what a report prints as its command
    # a nested command's own name too (`adapters train`, `pack verify`)
    command = " ".join(filter(None, (args.command, getattr(args, f"{args.command}_command", None))))

    def fail(message, status: int) -> int:
        tqdm = sys.modules.get("tqdm")
        for bar in list(getattr(getattr(tqdm, "tqdm", None), "_instances", ())):  # end open progress bars' lines
            bar.close()
        text = " ".join(str(message).split())
        for prefix in (f"metricbias {command}:", f"metricbias {args.command}:", "metricbias:"):
            text = text.removeprefix(prefix).strip()
        print(f"metricbias {command}: error: {text.removeprefix('error:').strip()}", file=sys.stderr)
        return status

    previous_hook, previous_format = sys.unraisablehook, warnings.formatwarning
    sys.unraisablehook = _reraise_interrupt(previous_hook)
    warnings.formatwarning = lambda message, *_, **__: f"metricbias {command}: warning: {message}\n"
    # a library's invalid string escapes, reported when it is first compiled (make installs with pip --no-compile)
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        _forget_handled_interrupt()
        return fail("interrupted (Ctrl-C); outputs are written only when complete, so nothing partial was left", 130)
    except SystemExit as exc:
        if isinstance(exc.code, str):  # a command's own usage message
            return fail(exc.code, 2)
        raise
    except (OSError, sqlite3.Error, UnicodeDecodeError) as exc:
        return fail(_runtime_message(exc), 1)
    except ValueError as exc:  # the project's errors about what was asked: names, options, input files
        return fail(exc, 2)
    except RuntimeError as exc:  # the project's errors about the run: sources, models, chapters
        return fail(exc, 1)
    finally:
        sys.unraisablehook, warnings.formatwarning = previous_hook, previous_format


if __name__ == "__main__":
    sys.exit(main())
