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
AVERAGE_COLUMNS = ["scores", "paradigm", "configurations", "attributes", "pairs", "clusters", "bias", "ci_low",
                   "ci_high"]


def paradigm_averages(scores: pd.DataFrame, configs: pd.DataFrame, *, label: str, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED, confidence: float = 0.95) -> pd.DataFrame:
    """Each paradigm's Eq. 2 bias averaged over its configurations and the attributes, with a cluster interval.

    Per attribute and pair, the mean over the paradigm's configurations of the Eq. 2 term (each configuration
    rescaled by its own Eq. 1; constant ones left out, :func:`.ch1_published.pair_term_table`);
    the average is the mean over attributes of the mean over pairs, which is the mean Eq. 2 over the paradigm's
    (configuration, attribute) cells when every cell is defined. The interval resamples whole clusters within each
    attribute (:func:`stratified_cluster_interval`: a WinoBias sentence and its twin are one, every other pair is
    its own; :mod:`metricbias.bias.clusters`). ``label`` names the scores ("released", "live") in the ``scores``
    column; one row per paradigm (:data:`AVERAGE_COLUMNS`).
    """
    paradigm = configs.drop_duplicates("metric").set_index("metric")["paradigm"]
    terms = {a: pair_term_table(scores, a) for a in dict.fromkeys(scores["attribute"])}
    present = [p for p in PARADIGM_ORDER if p in set(paradigm)] + sorted(set(paradigm) - set(PARADIGM_ORDER))
    rows = []
    for name in present:
        samples, keys, metrics = [], [], set()
        for attribute, table in terms.items():
            cols = [m for m in table.columns if paradigm.get(m) == name]
            if cols:
                samples.append(table[cols].mean(axis=1).to_numpy())
                keys.append([template_of(p, attribute) for p in table.index])
                metrics.update(cols)
        if not samples:
            continue
        low, high = stratified_cluster_interval(samples, keys, n_resamples=n_resamples, seed=seed,
                                                confidence=confidence)
        rows.append({"scores": label, "paradigm": name, "configurations": len(metrics), "attributes": len(samples),
                     "pairs": int(sum(s.size for s in samples)), "clusters": int(sum(len(set(k)) for k in keys)),
                     "bias": float(np.mean([s.mean() for s in samples])), "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=AVERAGE_COLUMNS)


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


def summary_figure(averages: pd.DataFrame):
    """The summary figure: each paradigm's average bias with its 95% interval, one marker per kind of scores."""
    from .. import plots

    return plots.forest_plot(averages, y="paradigm", hue="scores", value="bias", order=list(PARADIGM_ORDER),
                             xlabel="Eq. 2 bias: mean over configurations and attributes (95% CI)",
                             width=5.2, row_height=0.5)  # narrow: its labels stay legible on a phone


def save_figure(fig, root: Path | None = None) -> Path:
    """Write ``fig`` as the landing page's summary figure (:data:`FIGURE` under ``root``, the project root by
    default), atomically; returns the path."""
    from ...paths import atomic_path, project_root

    target = (root or project_root()) / FIGURE
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target, suffix=".png") as tmp:
        fig.savefig(tmp, format="png", dpi=150, bbox_inches="tight")
    return target


def _interval(row) -> str:
    if np.isnan(row["ci_low"]):
        return f"{row['bias']:.2f}"
    return f"{row['bias']:.2f} (95% CI {row['ci_low']:.2f} to {row['ci_high']:.2f})"


def paradigm_sentence(averages: pd.DataFrame, scores: str) -> str:
    """The averages of one kind of ``scores`` as a clause: "Matching 3.10 (95% CI 2.80 to 3.41), ..." (plain text,
    so that the landing page can paste it from the chapter)."""
    part = averages[averages["scores"] == scores]
    return "; ".join(f"{r['paradigm']} {_interval(r)}" for r in part.to_dict("records"))


def summary_findings(averages: pd.DataFrame) -> dict:
    """Numbers of the summary for the prose: per kind of scores, the paradigm with the highest and with the lowest
    average (``<scores>_highest``, ``<scores>_lowest``), whether their intervals overlap (``<scores>_separated``:
    "do not overlap" / "overlap"), and the sentence of :func:`paradigm_sentence` (``<scores>_sentence``)."""
    out = {}
    for name, part in averages.groupby("scores", sort=False):
        top, bottom = part.loc[part["bias"].idxmax()], part.loc[part["bias"].idxmin()]
        out[f"{name}_highest"], out[f"{name}_lowest"] = str(top["paradigm"]), str(bottom["paradigm"])
        out[f"{name}_highest_bias"], out[f"{name}_lowest_bias"] = float(top["bias"]), float(bottom["bias"])
        out[f"{name}_ratio"] = float(top["bias"] / bottom["bias"]) if bottom["bias"] > 0 else float("nan")
        out[f"{name}_separated"] = "do not overlap" if bottom["ci_high"] < top["ci_low"] else "overlap"
        out[f"{name}_sentence"] = paradigm_sentence(averages, name)
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


__all__ = ["AVERAGE_COLUMNS", "FIGURE", "PARADIGM_ORDER", "build_record", "commit", "duration", "executed_profiles",
           "paradigm_averages", "paradigm_sentence", "reproduce_box", "save_figure", "stratified_cluster_interval",
           "summary_figure", "summary_findings", "trained_parts_findings"]
