"""The package's three layers, as the import graph shows them: the core (metrics, measures, data sets, scoring,
the audit, judges, report, sweeps, suites, backbones) -> the book engine (``metricbias.book``: running the chapters,
score packs, the book's commands, tables and figures) -> the paper comparisons (``metricbias.book.reproduction``).
No arrow runs back up, there is no cycle, no core module names a chapter, at most :data:`ROOT_MODULES` modules sit
at the package root, and no module of the paper comparisons is longer than :data:`BOOK_MODULE_LINES`.

Every import counts, lazy ones inside functions too. Within the core, layers, lowest first:

0. infrastructure: paths, sources, signature, cache, backbones, models, wordnet, model_setup, trained,
   provenance, progress
1. datasets and metrics (siblings: neither imports the other)
2. scoring (where a metric meets pairs) and jobs (where its scores are computed: in process or on Dask)
3. bias (measures over score tables)
4. mitigation, metaeval
5. the faces: audits, judges, report, profiles (the metric suites), sweep, cli (with cli_options)

then 6. the book engine and 7. the paper comparisons. The one arrow up: the command line's entry point
(``metricbias.cli``) wires in the book's commands (:data:`ENTRY_POINT`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"

BOOK = "book"
PAPERS = "book.reproduction"
LAYERS = {
    "paths": 0, "sources": 0, "signature": 0, "cache": 0, "backbones": 0, "models": 0, "wordnet": 0,
    "model_setup": 0, "trained": 0, "provenance": 0, "progress": 0,
    "datasets": 1, "metrics": 1,
    "scoring": 2, "jobs": 2,
    "bias": 3,
    "mitigation": 4, "metaeval": 4,
    "audits": 5, "judges": 5, "profiles": 5, "sweep": 5, "cli": 5, "cli_options": 5, "report": 5,
    BOOK: 6,
    PAPERS: 7,
}
SIBLINGS = {frozenset({"datasets", "metrics"})}
#: the core's one import of the book engine: the entry point adds the book's commands to its parser
ENTRY_POINT = {("metricbias.cli", "metricbias.book.cli_book"), ("metricbias.cli", "metricbias.book.cli_packs")}
#: the most ``.py`` files directly in ``src/metricbias`` (``__init__.py`` included)
ROOT_MODULES = 20
#: the longest a module of the paper comparisons may be (one module per paper, chapter or figure)
BOOK_MODULE_LINES = 500


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for f in (SRC / "metricbias").rglob("*.py"):
        parts = list(f.relative_to(SRC).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (f, is_pkg)
    return out


def _imports(mod: str, path: Path, is_pkg: bool, mods) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = mod.split(".") if is_pkg else mod.split(".")[:-1]
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names = [prefix] + [f"{prefix}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in mods:
                name = name.rpartition(".")[0]
            if name and name not in (mod, "metricbias"):  # the package root only lends __version__
                found.add(name)
    return found


def _graph():
    mods = _modules()
    graph = {}
    for mod, (path, is_pkg) in mods.items():
        deps = _imports(mod, path, is_pkg, mods)
        graph[mod] = {d for d in deps if not (is_pkg and d.startswith(mod + "."))}  # a package's face
    return graph


def _area(mod: str) -> str:
    parts = mod.split(".")
    if parts[1] != BOOK:
        return parts[1]
    return PAPERS if len(parts) > 2 and parts[2] == "reproduction" else BOOK


def _is_core(mod: str) -> bool:
    return mod != "metricbias" and _area(mod) not in (BOOK, PAPERS)


def test_every_module_has_a_layer():
    assert {_area(m) for m in _graph() if m != "metricbias"} <= set(LAYERS)


def test_imports_go_down_the_layers_only():
    upward = []
    for mod, deps in _graph().items():
        if mod == "metricbias":
            continue
        for dep in deps:
            a, b = _area(mod), _area(dep)
            if a == b or (mod, dep) in ENTRY_POINT:
                continue
            if LAYERS[b] > LAYERS[a] or (LAYERS[a] == LAYERS[b] and frozenset({a, b}) in SIBLINGS):
                upward.append(f"{mod} -> {dep}")
    assert not upward, "imports from a lower layer up:\n" + "\n".join(sorted(upward))


def test_the_core_never_imports_the_book_but_to_wire_in_its_commands():
    bad = [f"{m} -> {d}" for m, deps in _graph().items() for d in deps
           if _is_core(m) and not _is_core(d) and (m, d) not in ENTRY_POINT]
    assert not bad, bad


def test_the_book_engine_never_imports_the_paper_comparisons():
    bad = [f"{m} -> {d}" for m, deps in _graph().items() for d in deps if _area(m) == BOOK and _area(d) == PAPERS]
    assert not bad, bad


def test_no_core_module_names_a_chapter():
    """A chapter's stem (``03_metrics_and_backbones``) appears only in the book: the core knows no chapter. The
    entry point's help may point a reader to one."""
    stems = {p.stem for p in (REPO / "notebooks").glob("*.md")}
    assert stems
    pattern = re.compile(r"\b(?:\d\d|A\d)_[a-z][a-z0-9_]*")
    named = []
    for mod, (path, _) in _modules().items():
        if not _is_core(mod) or mod == "metricbias.cli":
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = [s for s in stems if s in line] + pattern.findall(line)
            if found:
                named.append(f"{path.relative_to(SRC)}:{i}: {found[0]}")
    assert not named, named


def test_the_package_root_holds_at_most_twenty_modules():
    root = sorted(p.name for p in (SRC / "metricbias").glob("*.py"))
    assert len(root) <= ROOT_MODULES, f"{len(root)} modules at the root of metricbias (group some): {root}"


def test_every_paper_comparison_module_is_short():
    long = {f.name: n for f in sorted((SRC / "metricbias" / "book" / "reproduction").glob("*.py"))
            if (n := len(f.read_text(encoding="utf-8").splitlines())) > BOOK_MODULE_LINES}
    assert not long, f"modules over {BOOK_MODULE_LINES} lines (split them by chapter or figure): {long}"


def test_no_import_cycles():
    graph = _graph()
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, cycles
