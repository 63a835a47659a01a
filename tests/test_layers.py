"""The package's layers point one way (docs/design.md, "Layers"): no import cycles, no import from a
layer above, no function grown past what one sitting can read. Modules are as long as their concept
needs (issue 28: a line limit on modules split concepts to fit it, as probes.py out of rule_probes.py). Imports inside
functions count: a lazy import that dodges a cycle is still a cycle."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = "autodiff"

# Each layer may import only layers of a lower rank (parser stands apart: only lang and the
# layers above it read the AST; the core knows no language).
RANKS = [
    ("autodiff.cli", 7),
    ("autodiff.pytest_plugin", 8),
    ("autodiff.testing", 8),
    ("autodiff.__main__", 8),
    ("autodiff.engine.api", 6),
    ("autodiff.engine.checks", 5),
    ("autodiff.engine.views", 4),
    ("autodiff.engine.emit", 4),
    ("autodiff.engine.diff", 3),
    ("autodiff.engine.lang", 2),
    ("autodiff.engine.core", 1),
    ("autodiff.parser", 1),
]
MAX_FUNCTION_LINES = 65
# Written by a tool, not by us: kept as the tool writes it (a test checks it is current)
GENERATED = {f"{PKG}.parser.lalr_parser"}


def product_modules() -> dict:
    mods = {}
    for folder in ("cli", "parser", "engine"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join([PKG] + parts)] = path
    for name in ("__init__", "__main__", "pytest_plugin", "testing"):
        mods[PKG if name == "__init__" else f"{PKG}.{name}"] = ROOT / f"{name}.py"
    return mods


MODULES = product_modules()


def is_empty_package(name: str) -> bool:
    """`from ..engine import api` names the folder, whose empty __init__ holds nothing to depend on."""
    path = MODULES[name]
    return path.name == "__init__.py" and not path.read_text(encoding="utf-8").strip()


def imported(module: str, path: Path) -> set:
    """The product modules `module` imports anywhere in its text."""
    out = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = module.split(".")
            if node.level:
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names = [prefix] + [f"{prefix}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name in MODULES and name != module and not module.startswith(name + ".") \
                    and not is_empty_package(name):
                out.add(name)
    return out


EDGES = {m: imported(m, p) for m, p in MODULES.items()}


def rank(module: str):
    for prefix, r in RANKS:
        if module == prefix or module.startswith(prefix + "."):
            return prefix, r
    return PKG, 8                         # the root package: the public API over everything


def cycles() -> list:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in EDGES:
        if start in index:
            continue
        work = [(start, iter(sorted(EDGES[start])))]
        index[start] = low[start] = counter[0]; counter[0] += 1
        stack.append(start); on.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(EDGES[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    group = []
                    while True:
                        w = stack.pop(); on.discard(w); group.append(w)
                        if w == v:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_import_cycles():
    assert cycles() == []


def test_the_cycle_finder_finds_a_cycle():
    saved = dict(EDGES)
    try:
        EDGES["autodiff.engine.core.tape"] = EDGES.get("autodiff.engine.core.tape", set()) | {"autodiff.engine.api"}
        EDGES["autodiff.engine.api"] = EDGES["autodiff.engine.api"] | {"autodiff.engine.core.tape"}
        assert any("autodiff.engine.api" in group for group in cycles())
    finally:
        EDGES.clear()
        EDGES.update(saved)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    layer, r = rank(module)
    upward = []
    for target in sorted(EDGES[module]):
        target_layer, target_rank = rank(target)
        if target_layer == layer:
            continue
        if target_rank >= r or (layer == "autodiff.engine.core" and target_layer == "autodiff.parser") \
                or (layer == "autodiff.parser" and target_layer.startswith("autodiff.engine")):
            upward.append(target)
    assert upward == [], f"{module} ({layer}) imports from a layer that is not below it"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_functions_readable_in_one_sitting(module):
    if module in GENERATED:
        pytest.skip("generated code (python -m autodiff.parser.generate)")
    path = MODULES[module]
    text = path.read_text(encoding="utf-8")
    long = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                long.append(f"{node.name} ({length} lines)")
    assert long == [], f"{path.relative_to(ROOT)}: functions too long: {', '.join(long)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_names_across_modules_and_no_one_letter_aliases(module):
    path = MODULES[module]
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            bad += [f"one-letter alias {a.asname} for {a.name}" for a in node.names if a.asname and len(a.asname) == 1]
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(PKG)):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    bad.append(f"imports private {alias.name}")
                if alias.asname and len(alias.asname) == 1:
                    bad.append(f"one-letter alias {alias.asname} for {alias.name}")
    assert bad == [], f"{path.relative_to(ROOT)}: {'; '.join(bad)}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(("autodiff.engine.core", "autodiff.engine.diff"))))
def test_the_engine_catches_only_the_errors_it_names(module):
    """No `except Exception` (or bare `except:`) in the core and the derivative drivers: a fallback
    catches the engine's own types (engine/diff/fallbacks.py) or the errors a step is known to
    raise, and any other exception, a bug, propagates (issue 28 item 6)."""
    broad = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ExceptHandler):
            names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if node.type is None or any(isinstance(n, ast.Name) and n.id in ("Exception", "BaseException")
                                        for n in names):
                broad.append(node.lineno)
    assert broad == [], f"{module}: broad except at lines {broad}"
