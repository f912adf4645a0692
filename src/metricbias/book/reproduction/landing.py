"""The landing page and the closing chapter: each paradigm's average bias with its interval (the summary figure), and
the "Cite and reproduce" box (version, commit, build date, profile, the chapters' execution times, the command).

The summary figure is computed by the closing chapter, which runs last, and written to
``_static/data/landing-summary.png`` for the landing page; the box is rendered when the book is built
(``book/_ext/reproduce_box.py``), from the executed chapters and the run's timings (``metricbias.book.runner``).
"""

from __future__ import annotations

import ast
import json
import subprocess
import time
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from ...bias.clusters import expanded_levels, resampled_sums, template_of
from ...bias.pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED
from ...metrics.base import PLM_PARADIGMS, SURFACE_PARADIGMS
from .ch1_published import pair_term_table

#: the order of the paradigms in the summary (PLM-based first, Sun et al.'s Table 2, then the surface metrics)
PARADIGM_ORDER = (*PLM_PARADIGMS, *SURFACE_PARADIGMS)
#: where the landing page finds the summary figure (relative to the project root)
FIGURE = Path("_static") / "data" / "landing-summary.png"
AVERAGE_COLUMNS = ["scores", "attribute", "paradigm", "configurations", "pairs", "clusters", "bias", "ci_low",
                   "ci_high"]
GAP_COLUMNS = ["scores", "attribute", "pairs", "difference", "ci_low", "ci_high", "verdict"]


def _paradigm_terms(scores: pd.DataFrame, configs: pd.DataFrame):
    """Per attribute: the table of per-pair Eq. 2 terms (:func:`.ch1_published.pair_term_table`), its cluster keys
    and the configurations' paradigms (configurations missing from ``configs`` are left out)."""
    paradigm = configs.drop_duplicates("metric").set_index("metric")["paradigm"]
    for attribute in dict.fromkeys(scores["attribute"]):
        table = pair_term_table(scores, attribute)
        table = table[[m for m in table.columns if m in paradigm.index]]
        yield attribute, table, [template_of(p, attribute) for p in table.index], paradigm


def paradigm_by_attribute(scores: pd.DataFrame, configs: pd.DataFrame, *, label: str,
                          n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                          confidence: float = 0.95) -> pd.DataFrame:
    """Each paradigm's Eq. 2 bias on each attribute, with a cluster interval; no average over attributes, whose
    sets differ in size and Eq. 2 grows as a set shrinks (chapter 8).

    Per pair, the mean over the paradigm's configurations of the Eq. 2 term (each configuration rescaled by its own
    Eq. 1; constant ones left out); the bias is the mean over pairs, which is the mean Eq. 2 of the paradigm's
    configurations on the attribute. The interval resamples whole clusters (:mod:`metricbias.bias.clusters`: a
    WinoBias sentence and its twin are one, every other pair is its own). Configurations missing from ``configs``
    (for instance those a quality rule leaves out) are not counted. One row per (attribute, paradigm), in
    :data:`PARADIGM_ORDER` (:data:`AVERAGE_COLUMNS`; ``label`` names the scores in the ``scores`` column).
    """
    rows = []
    for attribute, table, keys, paradigm in _paradigm_terms(scores, configs):
        present = set(paradigm[table.columns])
        for name in [p for p in PARADIGM_ORDER if p in present] + sorted(present - set(PARADIGM_ORDER)):
            cols = [m for m in table.columns if paradigm[m] == name]
            values = table[cols].mean(axis=1).to_numpy()
            low, high = stratified_cluster_interval([values], [keys], n_resamples=n_resamples, seed=seed,
                                                    confidence=confidence)
            rows.append({"scores": label, "attribute": attribute, "paradigm": name, "configurations": len(cols),
                         "pairs": int(values.size), "clusters": len(set(keys)), "bias": float(values.mean()),
                         "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=AVERAGE_COLUMNS)


def plm_versus_surface(scores: pd.DataFrame, configs: pd.DataFrame, *, label: str,
                       n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                       confidence: float = 0.95) -> pd.DataFrame:
    """Per attribute, the PLM-based configurations' mean Eq. 2 term minus the surface configurations' (n-gram and
    static embedding), paired over the same pairs, with a cluster interval and its verdict ("higher", "lower" or
    not distinguishable at this size; :data:`GAP_COLUMNS`)."""
    from ...bias.claims import UNDECIDED

    rows = []
    for attribute, table, keys, paradigm in _paradigm_terms(scores, configs):
        plm = [m for m in table.columns if paradigm[m] in PLM_PARADIGMS]
        surface = [m for m in table.columns if paradigm[m] in SURFACE_PARADIGMS]
        if not plm or not surface:
            continue
        values = (table[plm].mean(axis=1) - table[surface].mean(axis=1)).to_numpy()
        low, high = stratified_cluster_interval([values], [keys], n_resamples=n_resamples, seed=seed,
                                                confidence=confidence)
        verdict = "higher" if low > 0 else "lower" if high < 0 else UNDECIDED
        rows.append({"scores": label, "attribute": attribute, "pairs": int(values.size),
                     "difference": float(values.mean()), "ci_low": low, "ci_high": high, "verdict": verdict})
    return pd.DataFrame(rows, columns=GAP_COLUMNS)


def stratified_cluster_interval(samples, keys, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                                confidence: float = 0.95) -> tuple[float, float]:
    """Interval of the mean over strata of each stratum's mean of ``samples[h]`` when the clusters ``keys[h]`` of
    every stratum are resampled with replacement, each stratum apart: the expanded percentile interval
    (:func:`metricbias.bias.clusters.expanded_levels`) for the fewest clusters of a stratum. (NaN, NaN) with
    ``n_resamples=0`` or a stratum of fewer than two clusters."""
    sizes = [len(set(k)) for k in keys]
    if not n_resamples or min(sizes) < 2:
        return float("nan"), float("nan")
    means = []
    for h, (values, clusters) in enumerate(zip(samples, keys)):
        sums = resampled_sums([values, np.ones(len(values))], clusters, n_resamples=n_resamples, seed=seed + h)
        means.append(sums[:, 0] / sums[:, 1])
    low, high = np.quantile(np.mean(means, axis=0), expanded_levels(min(sizes), confidence))
    return float(low), float(high)


def summary_figure(by_attribute: pd.DataFrame):
    """The summary figure: one panel per attribute, each paradigm's bias with its 95% interval, one marker per kind
    of scores."""
    import matplotlib.pyplot as plt
    import numpy as np

    from .. import plots
    from ..display import label

    attributes = list(dict.fromkeys(by_attribute["attribute"]))
    order = [p for p in PARADIGM_ORDER if p in set(by_attribute["paradigm"])]
    hues = list(dict.fromkeys(by_attribute["scores"]))
    ncols = min(3, len(attributes))
    nrows = -(-len(attributes) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(plots.PAGE_WIDTH, 0.32 * len(order) * nrows + 1.2 * nrows),
                             sharey=True, squeeze=False)
    step = 0.8 / max(len(hues), 1)
    for ax, attribute in zip(axes.flat, attributes):
        part = by_attribute[by_attribute["attribute"] == attribute]
        for k, h in enumerate(hues):
            rows = part[part["scores"] == h].set_index("paradigm").reindex(order)
            pos = np.arange(len(order)) - 0.4 + step * (k + 0.5)
            ax.errorbar(rows["bias"], pos, xerr=[rows["bias"] - rows["ci_low"], rows["ci_high"] - rows["bias"]],
                        fmt="o", ms=3, capsize=2, lw=1, label=h)
        ax.set_yticks(np.arange(len(order)), order)
        ax.set_title(label(attribute), fontsize=plots.MIN_FONT + 1)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=plots.MIN_FONT)
    axes.flat[0].invert_yaxis()
    for ax in list(axes.flat)[len(attributes):]:
        ax.set_visible(False)
    fig.supxlabel("Eq. 2 bias, mean over the paradigm's configurations (95% CI over templates)",
                  fontsize=plots.MIN_FONT)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(hues), fontsize=plots.MIN_FONT, frameon=False,
               bbox_to_anchor=(0.5, 1.02))
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def plm_backbones(configs: pd.DataFrame, *, families: bool = False) -> str:
    """The backbones of the PLM-based configurations of ``configs`` (``paradigm``, ``backbone`` columns), in order
    of appearance, as a list for a sentence ("all-MiniLM-L6-v2 and all-mpnet-base-v2"); with ``families``, each
    backbone's family, the name before its size ("BERT" for BERT-base and BERT-large)."""
    from .names import joined

    plm = configs[configs["paradigm"].isin(PLM_PARADIGMS)]["backbone"].dropna().astype(str)
    return joined(dict.fromkeys(plm.str.split("-").str[0] if families else plm))


def save_figure(fig, root: Path | None = None) -> Path:
    """Write ``fig`` as the landing page's summary figure (:data:`FIGURE` under ``root``, the project root by
    default), atomically; returns the path."""
    from ...paths import atomic_path, project_root

    target = (root or project_root()) / FIGURE
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target, suffix=".png") as tmp:
        fig.savefig(tmp, format="png", dpi=150, bbox_inches="tight")
    return target


def summary_findings(gaps: pd.DataFrame) -> dict:
    """Numbers of :func:`plm_versus_surface` for the prose, per kind of scores: on how many attributes the PLM-based
    configurations are shown more biased than the surface ones (``<scores>_plm_higher``), less biased
    (``_plm_lower``) or not distinguishable (``_plm_undecided``), of ``_attributes``."""
    out = {}
    for name, part in gaps.groupby("scores", sort=False):
        out.update({f"{name}_plm_higher": int((part["verdict"] == "higher").sum()),
                    f"{name}_plm_lower": int((part["verdict"] == "lower").sum()),
                    f"{name}_plm_undecided": int((~part["verdict"].isin(["higher", "lower"])).sum()),
                    f"{name}_attributes": len(part)})
    return out


# --- the "Cite and reproduce" box -----------------------------------------------------------------------------

def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def commit(root: Path) -> dict:
    """``{"commit": full hash or None (not a git checkout), "modified": uncommitted changes to tracked files}``."""
    head = _git(root, "rev-parse", "HEAD")
    changes = _git(root, "status", "--porcelain", "--untracked-files=no") if head else None
    return {"commit": head, "modified": bool(changes)}


def executed_profiles(chapter_dir: Path) -> dict[str, str]:
    """``{chapter stem: profile}`` of the executed chapters in ``chapter_dir``, read from the ``profile`` value
    baked into each chapter's parameters cell (:func:`metricbias.book.runner.prepare`)."""
    out = {}
    for path in sorted(Path(chapter_dir).glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb.get("cells", []):
            if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                for node in ast.parse(source).body:
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "profile":
                        out[path.stem] = ast.literal_eval(node.value)
                break
    return out


def build_record(root: Path | None = None, *, timings: dict | None = None, built: str | None = None) -> dict:
    """What the box shows for the book under ``root``: version, commit, build date, the profile(s) the executed
    chapters ran with, each chapter's execution time from the run's timings (``metricbias.book.runner.load_timings``)
    and the command that rebuilds it."""
    from ... import __version__
    from ...paths import project_root
    from .. import runner

    root = Path(root or project_root())
    chapters = runner.chapters(root)
    ran = executed_profiles(root / runner.CHAPTER_DIR)
    used = sorted(set(ran.values()))
    profile = used[0] if len(used) == 1 else None
    timings = runner.load_timings() if timings is None else timings
    rows = []
    for chapter in chapters:
        p = ran.get(chapter.stem)
        entry = timings.get(p, {}).get(chapter.stem, {}) if p else {}
        rows.append({"chapter": chapter.stem, "profile": p, "seconds": entry.get("seconds"),
                     "finished": entry.get("finished")})
    git = commit(root)
    checkout = f"git checkout {git['commit'][:12]} && " if git["commit"] else ""
    return {"version": __version__, **git, "built": built or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "profile": profile, "profiles": used, "chapters": rows,
            "total_seconds": sum(r["seconds"] for r in rows if r["seconds"] is not None),
            "command": f"{checkout}make book PROFILE={profile or 'offline'}"}


def duration(seconds) -> str:
    """``75.2`` -> ``"1 min 15 s"``; ``None`` -> ``"—"`` (the chapter has no recorded run)."""
    if seconds is None:
        return "—"
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def reproduce_box(record: dict) -> str:
    """The "Cite and reproduce" box (HTML) of a :func:`build_record`."""
    if record["commit"]:
        revision = f"<code>{escape(record['commit'][:12])}</code>" + (
            " (with uncommitted changes)" if record["modified"] else "")
    else:
        revision = "not a git checkout"
    profile = (f"<code>{escape(record['profile'])}</code>" if record["profile"] else
               ", ".join(f"<code>{escape(p)}</code>" for p in record["profiles"]) + " (chapters differ)"
               if record["profiles"] else "no executed chapter")
    times = "".join(f"<tr><td>{escape(r['chapter'])}</td><td>{duration(r['seconds'])}</td>"
                    f"<td>{escape(r['finished'] or '—')}</td></tr>" for r in record["chapters"])
    return (
        '<div class="admonition note cite-and-reproduce"><p class="admonition-title">Cite and reproduce</p>'
        f"<p>metricbias {escape(record['version'])}, commit {revision}, built {escape(record['built'])}, "
        f"profile {profile}. Cite it with the repository's <code>CITATION.cff</code>, together with the papers "
        "it reproduces.</p>"
        f"<p>Rebuild it with <code>{escape(record['command'])}</code>.</p>"
        '<div class="table-wrapper"><table class="table"><thead><tr><th>chapter</th><th>execution time</th>'
        f"<th>finished</th></tr></thead><tbody>{times}</tbody><tfoot><tr><td>all chapters</td>"
        f"<td>{duration(record['total_seconds'])}</td><td></td></tr></tfoot></table></div></div>"
    )


# --- the closing chapter's limitations --------------------------------------------------------------------------

def trained_parts_findings(trained: pd.DataFrame) -> dict:
    """The quality of the trained stand-ins, from their provenance (a ``book.training_data.summary()`` frame):
    the paraphrasers' validation perplexity (``para_perplexity_min``/``_max``) and best STS-B dev Pearson as a
    metric (``para_stsb_max``, NaN where not measured), the masked-LM heads' held-out masked-token accuracy
    (``mlm_accuracy_min``/``_max``), and how many of each were found (``paraphrasers``, ``mlm_heads``)."""
    found = trained[trained["available"].astype(bool)] if "available" in trained else trained.iloc[0:0]
    para = found[found["kind"] == "seq2seq"] if "kind" in found else found.iloc[0:0]
    mlm = found[found["kind"] == "mlm"] if "kind" in found else found.iloc[0:0]

    def column(frame, name):
        return frame[name].astype(float) if name in frame else pd.Series(dtype=float)

    perplexity, stsb = column(para, "validation_perplexity"), column(para, "stsb-dev pearson")
    accuracy = column(mlm, "masked_token_accuracy")
    return {"paraphrasers": len(para), "mlm_heads": len(mlm),
            "para_perplexity_min": float(perplexity.min()), "para_perplexity_max": float(perplexity.max()),
            "para_stsb_max": float(stsb.max()), "mlm_accuracy_min": float(accuracy.min()),
            "mlm_accuracy_max": float(accuracy.max())}


def left_out_once(left_out: pd.DataFrame, merged: pd.DataFrame) -> pd.DataFrame:
    """A table of the configurations each chapter leaves out (``chapter``, ``left out``: labels joined by ", ") with
    identical configurations counted once, as chapter 3 counts them: a configuration of ``merged`` (the table of
    :func:`metricbias.bias.scores.drop_identical`: ``metric`` merged into ``same_as``) is named with the one it is
    merged into, "BARTScore-MiniLM-F/PRISM-MiniLM-F" (chapter 7's form), once per row."""
    into = dict(zip(merged["metric"], merged["same_as"])) if len(merged) else {}
    twins: dict[str, list[str]] = {}
    for label, kept in into.items():
        twins.setdefault(kept, []).append(label)
    names = {kept: "/".join([kept, *labels]) for kept, labels in twins.items()}
    rows = [", ".join(dict.fromkeys(names.get(into.get(label, label), label) for label in str(text).split(", ")
                                    if label)) for text in left_out["left out"]]
    return left_out.assign(**{"left out": rows})


__all__ = ["AVERAGE_COLUMNS", "FIGURE", "GAP_COLUMNS", "PARADIGM_ORDER", "build_record", "commit", "duration",
           "executed_profiles", "left_out_once", "paradigm_by_attribute", "plm_versus_surface", "reproduce_box", "save_figure",
           "stratified_cluster_interval",
           "summary_figure", "summary_findings", "trained_parts_findings"]
