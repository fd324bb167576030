"""The source tree is the architecture: imports only go down the layers, and no module
imports itself back through others (parsed from the files, nothing imported)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Each lassi subpackage's layer; a module may import its own subpackage or a lower layer.
# (ingest/ installs as lassi.ingest; the stage families do not import each other.)
LAYERS = {
    "core": 0,
    "ingest": 1, "sim": 1,
    "risk": 2, "beacon": 2, "tokio": 2, "siox": 2,
    "tools": 3, "pipeline": 3,
    "report": 4, "evaluate": 4,
    "cli": 5,
}
# Folders that install into the lassi namespace (pyproject.toml [tool.setuptools.package-dir]).
MAPPED = {"ingest": REPO / "ingest"}


def _modules() -> dict[str, Path]:
    """Module name -> file for every Python file of the package."""
    out = {}
    for path in (REPO / "lassi").rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        out[".".join(p for p in parts if p != "__init__") or "lassi"] = path
    for pkg, root in MAPPED.items():
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            out[".".join(["lassi", pkg, *[p for p in parts if p != "__init__"]])] = path
    return out


def _imports(path: Path, mods: dict[str, Path]) -> set[str]:
    """The lassi modules a file imports (anywhere in it, lazy imports included)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
        else:
            continue
        for name in names:
            while name and name not in mods:
                name = name.rpartition(".")[0]
            if name.startswith("lassi"):
                out.add(name)
    return out


def _layer(mod: str) -> tuple[str, int] | None:
    if mod == "lassi.__main__":          # `python -m lassi`: the CLI, from the very top
        return "__main__", max(LAYERS.values()) + 1
    parts = mod.split(".")
    return (parts[1], LAYERS[parts[1]]) if len(parts) > 1 and parts[1] in LAYERS else None


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(p, mods) - {m} for m, p in mods.items()}


def test_every_subpackage_has_a_layer():
    subs = {p.name for p in (REPO / "lassi").iterdir() if p.is_dir() and not p.name.startswith("_")
            and (p / "__init__.py").exists()} | set(MAPPED)
    assert subs == set(LAYERS), "a new lassi subpackage needs a layer in LAYERS"
    loose = sorted(p.name for p in (REPO / "lassi").glob("*.py")
                   if p.name not in ("__init__.py", "__main__.py"))
    assert loose == [], f"modules belong in a layer's subpackage: {loose}"


def test_imports_only_go_down():
    bad = []
    for mod, deps in _graph().items():
        here = _layer(mod)
        for dep in deps:
            there = _layer(dep)
            if here is None or there is None:
                if dep != "lassi":
                    bad.append(f"{mod} -> {dep} (outside the layers)")
                continue
            if there[0] != here[0] and there[1] >= here[1]:
                bad.append(f"{mod} (layer {here[1]}) -> {dep} (layer {there[1]})")
    assert bad == [], "upward or sideways imports:\n" + "\n".join(sorted(bad))


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [d]))
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def test_the_checker_sees_a_violation(tmp_path):
    """The rule is not vacuous: an upward import in a parsed file is found."""
    f = tmp_path / "x.py"
    f.write_text("from lassi.cli.main import main\nimport lassi.report.html\n")
    mods = _modules()
    assert _imports(f, mods) >= {"lassi.cli.main", "lassi.report.html"}


def test_every_table_names_its_producer_and_sql():
    """One hop from a table to what builds it: the registry's module:function exists, and a
    table's SQL file (if any) is `sql/<family>/<table>.sql`."""
    import importlib

    from lassi.core.schemas import REGISTRY

    for name, t in REGISTRY.items():
        module, _, fn = t.producer.split()[0].partition(":")
        assert hasattr(importlib.import_module(module), fn), f"{name}: {t.producer}"
        if t.sql is not None:
            assert t.sql == f"{t.family}/{name}.sql" or name in t.sql, (name, t.sql)
            assert (REPO / "sql" / t.sql).is_file(), f"{name}: sql/{t.sql} missing"


def test_sql_files_are_tables_steps_reports_or_tools():
    """Under sql/<family>/ only table builders; intermediates in steps/, report and tool
    queries in sql/report/ and sql/tools/."""
    from lassi.core.schemas import REGISTRY

    built = {t.sql for t in REGISTRY.values() if t.sql}
    stray = []
    for f in sorted((REPO / "sql").rglob("*.sql")):
        rel = f.relative_to(REPO / "sql").as_posix()
        top = rel.split("/")[0]
        if top in ("report", "tools") or "/steps/" in rel:
            continue
        if rel not in built:
            stray.append(rel)
    assert stray == [], f"SQL files that build no registered table: {stray}"


def test_no_module_defines_a_function_twice():
    """A second `def` of the same name silently wins (report/beacon.py had two `_ratio`s, so
    layer-volume ratios printed one decimal beside "flag when > 1.2x")."""
    twice = []
    for mod, path in _modules().items():
        seen: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name in seen:
                    twice.append(f"{mod}.{node.name}")
                seen.add(node.name)
    assert twice == []


def test_layer_volume_and_compression_ratios_keep_their_precision():
    from lassi.report.beacon import compression_ratio, volume_ratio

    assert volume_ratio(1.24) == "1.24×"      # the flag threshold is 1.2x: 1.24 must not read 1.2
    assert volume_ratio(float("nan")) == "–"
    assert compression_ratio(12.34) == "12.3×"


def test_no_private_name_is_imported_across_modules():
    """A name starting with `_` is its module's own: no other lassi module imports it."""
    found = []
    for mod, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lassi"):
                found += [f"{mod}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []
