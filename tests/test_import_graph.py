"""The library's structure: layers import only downwards, no cycles, the library never imports the book layer
(``metricbias.reproduction``), and no module of the book layer is longer than :data:`BOOK_MODULE_LINES`.

Every import counts, lazy ones inside functions too. Layers, lowest first:

0. infrastructure: paths, sources, signature, cache, backbones, models, wordnet, model_setup, trained,
   provenance, progress
1. datasets and metrics (siblings: neither imports the other)
2. scoring (where a metric meets pairs) and jobs (where its scores are computed: in process or on Dask)
3. bias (measures over score tables)
4. mitigation, metaeval
5. the faces: audits, judges, report, profiles, runner (with chapter_inputs, chapter_lanes), sweep, plots, cli
   (with cli_book, cli_options, cli_packs), training_data, packs (score packs)
6. the book layer: reproduction (the chapters' comparisons with the papers and their sentences), which imports
   the library and is imported by nothing in it
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

LAYERS = {
    "paths": 0, "sources": 0, "signature": 0, "cache": 0, "backbones": 0, "models": 0, "wordnet": 0,
    "model_setup": 0, "trained": 0, "provenance": 0, "progress": 0,
    "datasets": 1, "metrics": 1,
    "scoring": 2, "jobs": 2,
    "bias": 3,
    "mitigation": 4, "metaeval": 4,
    "audits": 5, "judges": 5, "profiles": 5, "runner": 5, "chapter_inputs": 5, "chapter_lanes": 5, "sweep": 5, "plots": 5, "display": 5, "cli": 5,
    "training_data": 5, "report": 5, "packs": 5, "pack_plan": 5, "cli_packs": 5, "cli_book": 5, "cli_options": 5,
    "reproduction": 6,
}
SIBLINGS = {frozenset({"datasets", "metrics"})}
BOOK = "reproduction"
#: the longest a module of the book layer may be (one module per chapter or paper figure)
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
    return mod.split(".")[1]


def _area_or_root(mod: str) -> str:
    return _area(mod) if "." in mod else mod


def test_every_module_has_a_layer():
    assert {_area(m) for m in _graph() if m != "metricbias"} <= set(LAYERS)


def test_imports_go_down_the_layers_only():
    upward = []
    for mod, deps in _graph().items():
        if mod == "metricbias":
            continue
        for dep in deps:
            a, b = _area(mod), _area(dep)
            if a == b:
                continue
            if LAYERS[b] > LAYERS[a] or (LAYERS[a] == LAYERS[b] and frozenset({a, b}) in SIBLINGS):
                upward.append(f"{mod} -> {dep}")
    assert not upward, "imports from a lower layer up:\n" + "\n".join(sorted(upward))


def test_the_library_never_imports_the_book_layer():
    """The direction library -> book is forbidden for every module outside the book layer (cli, runner and
    plots included): the library knows nothing of chapters."""
    bad = [f"{m} -> {d}" for m, deps in _graph().items() for d in deps
           if _area_or_root(m) != BOOK and _area(d) == BOOK]
    assert not bad, bad


def test_every_book_module_is_short():
    long = {f.name: n for f in sorted((SRC / "metricbias" / BOOK).glob("*.py"))
            if (n := len(f.read_text(encoding="utf-8").splitlines())) > BOOK_MODULE_LINES}
    assert not long, f"book modules over {BOOK_MODULE_LINES} lines (split them by chapter or figure): {long}"


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
