"""Which score packs a profile ships: its chapters' text sets x their packed configurations
(:mod:`metricbias.book.packs`).

Each chapter's text sets are declared in :data:`metricbias.book.chapter_profiles.PACK_SETS` (``{name}`` filled with
the chapter's parameters under the profile, as :func:`metricbias.book.runner.chapter_parameters` reads them); its
configurations are the ones the chapter measures, ``profiles.suite`` less its ``skip_metrics`` (and, on the sets of
:data:`~metricbias.book.chapter_profiles.PACK_GRID_SETS`, the fixed-backbone grid's), kept where their metric's card
says a pack may hold them (:func:`is_packed`); the PLL sets are scored by every masked LM here with the score
functions of ``pll.RUNS``; the sets of :data:`~metricbias.book.chapter_profiles.PACK_INVARIANT_SETS` by the
gender-blind wrappers of chapter 6's adapted metrics; those of :data:`~metricbias.book.chapter_profiles.PACK_ADAPTER_SETS`
by the metrics with their shipped debiasing adapters.
"""

from __future__ import annotations


def is_packed(spec, text_set: str = "") -> bool:
    """Whether the card of ``spec``'s metric lets a score pack hold its scores on ``text_set``
    (:attr:`metricbias.metrics.Metric.packed`: every configuration that runs a transformer, and on their slow text
    sets METEOR, ROUGE-SU4, TER and WMD; a user's metric declares its own). The PLL scores are packed too:
    :func:`plan` adds them."""
    from ..metrics.registry import metric_class

    # an association pack holds a few thousand numbers per configuration in place of millions of pairs: every one
    return text_set.startswith("associations:") or metric_class(spec.name).packed_on(text_set)


def plan(profile: str, configs=None, device: str = "auto", sets=None) -> list[Entry]:
    """Every pack file of ``profile``: each chapter's text sets (``chapter_profiles.PACK_SETS``; or those of them
    named in ``sets``) x its packed configurations (those of them whose label or registry name is in ``configs``),
    once each."""
    from .. import backbones, profiles
    from ..bias import pll
    from ..metrics.registry import Spec
    from . import chapter_profiles, runner
    from .packs import Entry, MetricConfig, PLLConfig, text_set

    wanted = profiles.names_of(configs) if configs else None
    wanted_sets = profiles.names_of(sets) if sets else None
    out, seen = [], set()
    lms = [b for b in backbones.available() if backbones.BACKBONES[b].kind == "mlm"]
    for chapter in chapter_profiles.PACK_SETS:
        params = runner.chapter_parameters(profile, chapter)
        skip = params.get("skip_metrics", "")
        named = profiles.names_of(params.get("metric_names", ""))  # a chapter given metric names runs those instead
        suite = [Spec.of(n) for n in sorted(named - profiles.names_of(skip))] if named else profiles.suite(profile, skip)
        grid_sets = [t.format(**params) for t in chapter_profiles.PACK_GRID_SETS.get(chapter, [])]
        for name in (template.format(**params) for template in chapter_profiles.PACK_SETS[chapter]):
            if wanted_sets and name not in wanted_sets:
                continue
            if text_set(name).kind == "pll":
                loader = name.split(":", 1)[1].split(";", 1)[0]  # pll:<set> or pll:<set>;pairs=N;seed=S
                configs_here = [PLLConfig(lm, m, device) for lm in lms for m in pll.RUNS[loader]]
                if wanted:
                    configs_here = [c for c in configs_here if c.label in wanted or "pll" in wanted]
            else:
                here = [s for s in suite + (_grid_specs() if name in grid_sets else []) if is_packed(s, name)
                        and (not wanted or s.label in wanted or s.name in wanted)]
                configs_here = [MetricConfig(s.name, s.options, s.label, device) for s in here]
            for config in configs_here:
                # the grid's labels differ from the suite's for the same configuration: one file per signature
                if (name, config.signature) not in seen:
                    seen.add((name, config.signature))
                    out.append(Entry(config, name))
    for chapter, templates in chapter_profiles.PACK_INVARIANT_SETS.items():
        params = runner.chapter_parameters(profile, chapter)
        configs_here = [c for c in _invariant_configs(params, device)
                        if not wanted or c.label in wanted or "invariant" in wanted]
        for name in (template.format(**params) for template in templates):
            if not wanted_sets or name in wanted_sets:
                out.extend(Entry(config, name) for config in configs_here)
    for chapter, templates in chapter_profiles.PACK_ADAPTER_SETS.items():
        params = runner.chapter_parameters(profile, chapter)
        configs_here = [c for c in _adapter_configs(device) if not wanted or c.label in wanted or "adapter" in wanted]
        for name in (template.format(**params) for template in templates):
            if not wanted_sets or name in wanted_sets:
                out.extend(Entry(config, name) for config in configs_here)
    return out


def _adapter_configs(device: str) -> list:
    """The metrics of the shipped debiasing adapters, each with its adapter attached (by name)."""
    from ..mitigation.evaluation import shipped_adapter_specs
    from .packs import MetricConfig

    return [MetricConfig(metric, options, f"{name}", device) for name, (metric, options) in
            shipped_adapter_specs().items()]


def _invariant_configs(params: dict, device: str) -> list:
    """The gender-blind wrappers of the adapted metrics a chapter's ``invariant_metrics`` names, each as configured
    by its shipped adapter's metadata."""
    from .. import profiles
    from ..mitigation import training
    from ..mitigation.evaluation import metric_spec
    from . import chapter_profiles
    from .packs import InvariantConfig

    out = []
    for label in sorted(profiles.names_of(params.get("invariant_metrics", ""))):
        metric, backbone = chapter_profiles.ADAPTED_METRICS[label]
        name, options = metric_spec(training.shipped(metric, params[backbone]).meta)
        out.append(InvariantConfig(name, options, "gender", device=device))
    return out


def _grid_specs():
    from ..metrics import backbone_grid

    return backbone_grid.entries()


def estimate(entries: list[Entry]) -> list[dict]:
    """Scores and bytes (float64) of each file of ``entries``, from the texts alone (nothing is scored)."""
    from .packs import texts_of

    rows, memo = [], {}
    for entry in entries:
        jobs = texts_of(entry.text_set, entry.config, memo)
        n = sum(len(c) for c, _ in jobs)
        rows.append({"file": entry.file, "configuration": entry.config.label, "text_set": entry.text_set,
                     "scores": n, "bytes": 8 * n})
    return rows


__all__ = ["estimate", "is_packed", "plan"]
