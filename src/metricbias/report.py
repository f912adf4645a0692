"""A one-page audit report: :func:`audit_report` (and ``metricbias audit ... --report FILE.html``).

The page is one self-contained HTML file: inline CSS, the figure as inline SVG, no script, and nothing
fetched from anywhere (no fonts, images or styles from a network), so that it opens offline and can be
mailed or attached to a paper's supplement. It shows

* the audited metric's bias per attribute (the measures of :func:`metricbias.audits.audit`, with their 95%
  bootstrap intervals);
* where the metric sits among the book's reference configurations scored through the same cached path on
  the same pairs (:func:`reference_configurations`: the n-gram metrics and the all-MiniLM-L6-v2
  configurations of a profile) and, on the released dataset (``dataset="published"``), among the 29
  metrics whose per-example scores Sun et al. (2022) released (:mod:`metricbias.datasets.published`):
  a dot plot per attribute with the audited metric highlighted, and its rank in each group;
* the dataset sizes, the metric's signature and the command (or call) that made the page.

The page is written atomically, and a path that cannot be written fails before anything is scored.
"""

from __future__ import annotations

import html
import io
import shlex
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__, datasets, profiles
from .bias import measures as bias_measures
from .paths import atomic_path, check_writable
from .metrics.registry import resolve
from .scoring import score_metrics

#: backbones of the reference configurations (the cheap ones: MiniLM and the STS-B head trained on it)
REFERENCE_BACKBONES = ("all-MiniLM-L6-v2", "stsb-all-MiniLM-L6-v2")
AUDITED, REFERENCE, RELEASED = "audited", "reference (this book)", "released (Sun et al. 2022)"
COLORS = {AUDITED: "#c0392b", REFERENCE: "#2e86c1", RELEASED: "#9a9a9a"}

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:2rem auto;
max-width:60rem;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
.sub{color:#555;margin-top:0}table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}
th,td{padding:.25rem .6rem;border-bottom:1px solid #e5e5e5;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f5f5f5}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.82rem}
pre{background:#f7f7f7;padding:.6rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
pre.command{word-break:normal;overflow-wrap:normal}
.note{color:#555;font-size:.88rem}figure{margin:1rem 0}svg{max-width:100%;height:auto}
"""


def reference_configurations(profile: str = "offline") -> list:
    """The configurations a report compares with: ``profile``'s n-gram metrics and its MiniLM configurations."""
    return [s for s in profiles.suite(profile)
            if s.name in profiles.NGRAM or s.options.get("backbone") in REFERENCE_BACKBONES]


def _released_bias(pairs: pd.DataFrame) -> pd.DataFrame:
    """Eq. 2 of Sun et al.'s 29 released metrics on the released pairs of ``pairs`` (points, no interval)."""
    from .datasets import published

    scores = published.scores(sorted(pairs["attribute"].unique()))
    scores = scores[scores["pair_id"].isin(set(pairs["pair_id"]))]
    return bias_measures.measure(scores, ["bias"], n_resamples=0)


def _named(frame: pd.DataFrame) -> pd.DataFrame:
    """A table over a dataset of several parts (``adapter-evaluation``) names each attribute ``part/attribute``."""
    if "dataset" in frame.columns and frame["dataset"].nunique() > 1:
        return frame.assign(attribute=frame["dataset"] + "/" + frame["attribute"])
    return frame


def placement(audited: pd.DataFrame, others: pd.DataFrame) -> pd.DataFrame:
    """Per attribute: the audited metric's Eq.-2 bias and its rank (1: least biased) in each group of ``others``.

    ``audited``: the ``bias`` rows of the audit; ``others``: ``attribute, metric, value, group`` rows.
    """
    rows = []
    for r in audited.itertuples():
        row = {"attribute": r.attribute, "bias": r.value, "ci_low": r.ci_low, "ci_high": r.ci_high}
        for group, label in ((REFERENCE, "reference"), (RELEASED, "released")):
            values = others.loc[(others["attribute"] == r.attribute) & (others["group"] == group), "value"].dropna()
            if len(values):
                row[f"rank among {label}"] = f"{int((values < r.value).sum()) + 1} of {len(values) + 1}"
                row[f"{label} median"] = float(values.median())
        rows.append(row)
    return pd.DataFrame(rows)


def _figure(points: pd.DataFrame) -> str:
    """Dot plot of Eq.-2 bias per attribute, one row per attribute, as an inline SVG string."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    attributes = list(dict.fromkeys(points["attribute"]))
    fig, ax = plt.subplots(figsize=(8.5, 0.75 * len(attributes) + 1.4))
    rng = np.random.default_rng(0)  # vertical jitter only, so that dots of equal bias stay visible
    offsets = {RELEASED: -0.18, REFERENCE: 0.12, AUDITED: 0.0}
    for group in (RELEASED, REFERENCE, AUDITED):
        sub = points[points["group"] == group]
        if sub.empty:
            continue
        y = np.array([attributes.index(a) for a in sub["attribute"]], dtype=float) + offsets[group]
        if group != AUDITED:
            y += rng.uniform(-0.07, 0.07, len(y))
            ax.scatter(sub["value"], y, s=22, color=COLORS[group], alpha=0.75, label=group, zorder=2)
        else:
            err = np.vstack([sub["value"] - sub["ci_low"], sub["ci_high"] - sub["value"]])
            ax.errorbar(sub["value"], y, xerr=np.nan_to_num(err), fmt="D", ms=8, color=COLORS[group], ecolor=COLORS[group],
                        capsize=4, lw=1.6, label=f"{group}: {sub['metric'].iloc[0]} (95% CI)", zorder=3)
    ax.set_yticks(range(len(attributes)), [a.replace("_", " ") for a in attributes])
    ax.invert_yaxis()
    ax.set_xlabel("bias (Eq. 2, rescaled scores ×100; lower is less biased)")
    ax.grid(axis="x", color="#e5e5e5")
    ax.set_axisbelow(True)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.5 / (len(attributes) + 1.5) - 0.12), ncol=3, frameon=False,
              fontsize=8)
    fig.tight_layout()
    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "metricbias"}):
        fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = out.getvalue()
    return text[text.index("<svg"):]  # the XML prolog and DOCTYPE do not belong inside HTML


def _table(frame: pd.DataFrame, digits: int = 2) -> str:
    def cell(v):
        if isinstance(v, (float, np.floating)):
            return "—" if np.isnan(v) else f"{v:.{digits}f}"
        return html.escape(str(v))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _view_sections(association: pd.DataFrame | None, metaeval: pd.DataFrame | None) -> str:
    """The HTML of the association and meta-evaluation views (empty where a view was not asked for)."""
    out = []
    if association is not None:
        wide = association.pivot_table(index=["test", "level"], columns="metric", values="effect_size",
                                       sort=False, dropna=False).reset_index()
        mine = association[association["group"] == AUDITED]
        wide.insert(2, "p (audited)", mine.set_index(["test", "level"])["p_value"].reindex(
            list(zip(wide["test"], wide["level"]))).to_numpy())
        out.append(f"""<h2>Association tests through the metric</h2>
<p>{html.escape(association_sentence(association))}</p>
<p class="note">Effect sizes (Cohen's d of the targets' associations; WEAT/SEAT as Gao &amp; Wan 2022 run them
through a metric) of the audited metric and of each reference configuration, and the audited metric's
permutation p-value.</p>
{_table(wide, digits=3)}""")
    if metaeval is not None:
        shown = metaeval.drop(columns=["signature", "group"], errors="ignore")
        out.append(f"""<h2>Agreement with human judgements after a gender swap</h2>
<p>{html.escape(metaeval_sentence(metaeval))}</p>
<p class="note">The headline correlation on the original and on the gender-swapped texts (Gao &amp; Wan 2022,
Section 5), the shift (after minus before) and its 95% percentile bootstrap interval over items; the audited
metric first, then the reference configurations.</p>
{_table(shown, digits=4)}""")
    return "\n".join(out)


def render(*, label: str, signature: str, dataset: str, table: pd.DataFrame, sizes: pd.DataFrame,
           points: pd.DataFrame, places: pd.DataFrame, references: pd.DataFrame, command: str,
           association: pd.DataFrame | None = None, metaeval: pd.DataFrame | None = None) -> str:
    """The report page as one HTML string (no external resource)."""
    esc = html.escape
    released = (points["group"] == RELEASED).any()
    compared = "the book's reference configurations" + (" and the 29 metrics released by Sun et al. (2022)"
                                                          if released else "")
    audit = table.assign(measure=table["measure"].str.replace("_", " ")).drop(columns=["signature", "metric"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Bias audit: {esc(label)}</title><style>{_CSS}</style></head>
<body>
<h1>Bias audit: {esc(label)}</h1>
<p class="sub">Dataset <code>{esc(dataset)}</code>, {len(sizes)} attribute(s), {int(sizes['pairs'].sum()):,} pairs.
Made by metricbias {esc(__version__)}.</p>

<h2>Bias per attribute</h2>
<p>Eq. 2 of Sun et al. (2022): the mean absolute difference between the scores of a pair's two candidates
(rescaled to 0–100 with the minimum and maximum over both candidates of the attribute); the stereotypical
difference is the signed mean (candidate 1, the stereotypical one, minus candidate 2). 95% bootstrap
intervals: over whole templates where pairs share one (the WinoBias twins, your own pairs' clusters), BCa over
pairs otherwise.</p>
{_table(audit)}

<h2>Among other metrics on the same pairs</h2>
<p>The audited metric (red, with its interval) beside {compared}, each scored on the same pairs.
Rank 1 is the least biased.</p>
<figure>{_figure(points)}</figure>
{_table(places)}
{"" if released else '<p class="note">Sun et al. released per-example scores for the released dataset only '
 '(<code>dataset="published"</code>); on this dataset the page compares with the reference configurations.</p>'}

{_view_sections(association, metaeval)}

<h2>Reference configurations</h2>
<p>Eq. 2 of each reference configuration per attribute, on the same pairs, and the signatures.</p>
{_table(references.drop(columns=["signature"], errors="ignore"))}
{"" if "signature" not in references else "<pre>" + esc(chr(10).join(f"{m}: {s}" for m, s in zip(references["metric"], references["signature"]))) + "</pre>"}

<h2>Data</h2>
{_table(sizes, digits=0)}

<h2>Signature</h2>
<pre>{esc(signature)}</pre>

<h2>Command</h2>
<pre class="command">{esc(command)}</pre>
</body></html>
"""


def audit_report(metric, path, dataset: str = "published", attributes=None, measures=None, *, pairs=None,
                 references=None,
                 profile: str = "offline", cache=True, n_resamples: int = 9999, seed: int = 0, sample_size: int = 0,
                 built_dir=None, tests: bool = False, gap: float | None = None, views=("pairs",),
                 association_tests=None, metaeval_dataset="flickr8k", metaeval_sample: int = 0,
                 command: str | None = None) -> pd.DataFrame:
    """Audit ``metric`` as :func:`metricbias.audits.audit` does and write the one-page report to ``path``.

    ``references``: the configurations to compare with (names, specifications, profile entries; default
    :func:`reference_configurations` of ``profile``; ``()`` for none). ``command`` is printed on the page
    (default: this call, written out). Returns the audit table (:data:`metricbias.audits.COLUMNS`).

    ``views`` adds, beside ``"pairs"`` (the page above), ``"association"`` (:func:`association_view`: the word-level
    tests, or ``association_tests`` by name) and ``"metaeval"`` (:func:`metaeval_view` on ``metaeval_dataset``,
    ``metaeval_sample`` items; default Flickr8k), each beside the same reference configurations.
    """
    from .audits import audit

    views = (views,) if isinstance(views, str) else tuple(views)
    unknown = [v for v in views if v not in VIEWS]
    if unknown or "pairs" not in views:
        raise ValueError(f"views must include 'pairs' and be among {', '.join(VIEWS)}; got {', '.join(views)}")
    check_writable(path, "--report")
    references = reference_configurations(profile) if references is None else list(references)
    if isinstance(dataset, pd.DataFrame) and pairs is None:
        dataset, pairs = "pairs", dataset
    if pairs is not None:
        dataset = "pairs"
    options = dict(pairs=pairs, cache=cache, n_resamples=n_resamples, seed=seed, sample_size=sample_size,
                   built_dir=built_dir)
    table = audit(metric, dataset, attributes, measures, tests=tests, gap=gap, **options)
    label, signature = table["metric"].iloc[0], table["signature"].iloc[0]
    audited = table[table["measure"] == "bias"]
    if audited.empty:  # the page places the metric by Eq. 2 whatever measures the table holds
        audited = audit(metric, dataset, attributes, ["bias"], **options)
    own, pairs = pairs, datasets.pairs_for(dataset, attributes, pairs=pairs, sample_size=sample_size, seed=seed,
                                           built_dir=built_dir)
    others = []
    if references:
        ref_scores = score_metrics(pairs, references, cache=cache, progress=False)
        ref = _named(bias_measures.measure(ref_scores, ["bias"], n_resamples=0))
        others.append(ref[ref["signature"] != signature].assign(group=REFERENCE))  # not the audited metric itself
    if dataset == "published":
        others.append(_released_bias(pairs).assign(group=RELEASED))
    others = pd.concat(others, ignore_index=True) if others else pd.DataFrame(
        columns=["attribute", "metric", "value", "group"])
    points = pd.concat([others[["attribute", "metric", "value", "group"]],
                        audited[["attribute", "value", "ci_low", "ci_high"]].assign(metric=label, group=AUDITED)],
                       ignore_index=True)
    ref_rows = others[others["group"] == REFERENCE]
    ref_wide = (ref_rows.pivot_table(index="metric", columns="attribute", values="value", sort=False).reset_index()
                if len(ref_rows) else pd.DataFrame({"metric": []}))
    if len(ref_rows):
        ref_wide["signature"] = ref_wide["metric"].map(ref_rows.groupby("metric")["signature"].first())
    sizes = _named(pairs).groupby("attribute", sort=False).size().rename("pairs").reset_index()
    if sample_size:  # a sample: say of how many
        whole = _named(datasets.pairs_for(dataset, attributes, pairs=own, built_dir=built_dir))
        sizes["pairs in the dataset"] = sizes["attribute"].map(whole.groupby("attribute").size())
    if command is None:
        command = rerun_command(metric, path, dataset=dataset, pairs=own, attributes=attributes, measures=measures,
                                sample_size=sample_size, seed=seed, n_resamples=n_resamples, views=views)
    association = metaeval = None
    if "association" in views:
        association = association_view(metric, references, tests=association_tests, cache=cache, seed=seed)
    if "metaeval" in views:
        metaeval = metaeval_view(metric, references, dataset=metaeval_dataset, sample=metaeval_sample, cache=cache,
                                 seed=seed)
    page = render(label=label, signature=signature, dataset=dataset, table=table, sizes=sizes, points=points,
                  places=placement(audited, others), references=ref_wide, command=command,
                  association=association, metaeval=metaeval)
    with atomic_path(path, suffix=".html") as tmp:
        tmp.write_text(page, encoding="utf-8")
    return table


#: the views a report can hold (``views=``): Eq. 2 on paired candidates, association tests through the metric,
#: the shift of its agreement with human judgements after a gender swap
VIEWS = ("pairs", "association", "metaeval")


def association_view(metric, references, *, tests=None, cache=True, n_permutations: int = 10_000,
                     seed: int = 0) -> pd.DataFrame:
    """The association tests of chapter 5 (Gao & Wan 2022, WEAT/SEAT through a metric) for ``metric`` and the
    ``references``: ``tests`` names tests (default: every word-level test), each at every level it has when named.
    One row per test x metric: ``test, level, metric, effect_size, p_value, group``."""
    from .bias import association
    from .datasets import seat

    chosen = seat.tests("all", "word") if tests is None else seat.tests(tests, None)
    label, built = resolve(metric)
    table = association.run(chosen, {label: built, **association.build_metrics(list(references))}, cache=cache,
                            n_permutations=n_permutations, seed=seed, progress=True)
    return table.assign(group=np.where(table["metric"] == label, AUDITED, REFERENCE))[
        ["test", "level", "metric", "effect_size", "p_value", "group"]]


def metaeval_view(metric, references, *, dataset="flickr8k", sample: int = 0, cache=True, n_resamples: int = 999,
                  seed: int = 0) -> pd.DataFrame:
    """Chapter 7's gender swap on a meta-evaluation set (a registered name, or a user's JSONL or DARR file as
    ``metricbias metaeval --dataset`` takes it): the headline correlation before and after, the shift and its 95%
    bootstrap interval, for ``metric`` and the ``references`` (:func:`metricbias.metaeval.shift.swap_shift`)."""
    from .datasets import meta_eval
    from .metaeval.shift import swap_shift

    data = meta_eval.load(str(dataset)).sample(sample, seed=seed)
    label, built = resolve(metric)
    table = swap_shift(data, [(label, built), *references], cache=cache, n_resamples=n_resamples, seed=seed)
    return table.assign(group=np.where(table["metric"] == label, AUDITED, REFERENCE))


def association_sentence(view: pd.DataFrame, alpha: float = 0.05) -> str:
    """What the association view found, in one sentence (how many tests are significant, beside the references)."""
    mine = view[view["group"] == AUDITED]
    refs = view[view["group"] == REFERENCE]
    k, n = int((mine["p_value"] < alpha).sum()), int(mine["p_value"].notna().sum())
    per_ref = refs.groupby("metric")["p_value"].apply(lambda p: int((p < alpha).sum()))
    beside = (f", against {int(per_ref.min())} to {int(per_ref.max())} of the same tests for the "
              f"{len(per_ref)} reference configurations" if len(per_ref) else "")
    return (f"The metric shows an association significant at {alpha:g} (Gao & Wan's permutation test) in {k} of "
            f"{n} tests{beside}; a test is significant when the metric scores one target set closer to one "
            "attribute set than the other beyond what a random split of the targets gives.")


def metaeval_sentence(view: pd.DataFrame) -> str:
    """What the meta-evaluation view found, in one sentence (the shift and its interval, beside the references)."""
    mine = view[view["group"] == AUDITED].iloc[0]
    refs = view[view["group"] == REFERENCE]
    verdict = ("moves" if mine["ci_low"] > 0 or mine["ci_high"] < 0 else "does not move distinguishably")
    beside = (f" (reference configurations: {refs['shift'].min():+.4f} to {refs['shift'].max():+.4f})"
              if len(refs) else "")
    statistic = {"kendall": "Kendall τ_b", "darr_tau": "DARR Kendall-like τ"}.get(mine["statistic"], mine["statistic"])
    return (f"After the gender swap the metric's {statistic} with the human judgements "
            f"{verdict}: {mine['before']:.4f} before, {mine['after']:.4f} after, a shift of {mine['shift']:+.4f} "
            f"(95% CI {mine['ci_low']:+.4f} to {mine['ci_high']:+.4f}){beside}.")


def _metric_argument(metric) -> str | None:
    """How ``--metric`` names ``metric`` in a new process: a registered specification, or ``module:name`` of a
    function or object importable by name (None for one defined in ``__main__``, a notebook or a lambda)."""
    if isinstance(metric, str):
        from .metrics.registry import BUILTIN, metric_class, names

        head = metric.split(":", 1)[0]
        if head in BUILTIN or head not in names():  # built in, or module:name already
            return metric
        metric = metric_class(head)  # registered in this process only: name what it holds
    function = getattr(metric, "function", metric)  # a metric made from a function keeps it
    module, name = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if module and module != "__main__" and name and "<" not in name and "." not in name:
        return f"{module}:{name}"
    return None


def rerun_command(metric, path, *, dataset="published", pairs=None, attributes=None, measures=None,
                  sample_size: int = 0, seed: int = 0, n_resamples: int = 9999, views=("pairs",)) -> str:
    """The ``metricbias audit`` command that writes this report again, for a report made from Python; where the
    metric cannot be named from a new process (a lambda, a function of ``__main__`` or a notebook), the command
    says to save it in a module and name it ``MODULE:NAME``."""
    named = _metric_argument(metric)
    argv = ["audit", "--metric", named or "MODULE:NAME"]
    if pairs is None:
        argv += ["--dataset", str(dataset)]
    else:
        argv += ["--pairs", "PAIRS.tsv" if isinstance(pairs, pd.DataFrame) else str(pairs)]
    if attributes:
        argv += ["--attributes", attributes if isinstance(attributes, str) else ",".join(attributes)]
    if measures:
        argv += ["--measures", measures if isinstance(measures, str) else ",".join(measures)]
    if sample_size:
        argv += ["--sample-size", str(sample_size)]
    argv += ["--seed", str(seed), "--n-resamples", str(n_resamples), "--out", Path(path).with_suffix(".csv").name,
             "--report", str(path)]
    if tuple(views) != ("pairs",):
        argv += ["--views", ",".join(views)]
    notes = []
    if named is None:
        notes.append("# the metric was defined where a new process cannot import it: save it in a module and "
                     "give it as MODULE:NAME")
    if isinstance(pairs, pd.DataFrame):
        notes.append("# the pairs were a DataFrame: write them to PAIRS.tsv (attribute, candidate_1, candidate_2, "
                     "reference)")
    return "\n".join([*notes, command_line(argv)])


def command_line(argv) -> str:
    """``metricbias`` and its arguments, quoted for a shell (the command a report prints)."""
    return shlex.join(["metricbias", *map(str, argv)])


__all__ = ["VIEWS", "association_sentence", "association_view", "audit_report", "command_line", "metaeval_sentence",
           "metaeval_view", "placement", "reference_configurations", "render", "rerun_command"]
