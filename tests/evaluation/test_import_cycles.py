"""No import circle among the engine's modules: a circle makes import order matter and ties layers together.

``import_graph`` and ``import_cycles`` take any list of package roots, so the same check can cover ``service/``,
``workers/`` and ``evalserve/`` too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the package roots whose modules may not import each other in a circle
ROOTS = [ROOT / "evaluation"]


def module_names(roots: Iterable[Path]) -> dict[str, Path]:
    """Every module under the package roots: dotted name -> file (a package is its ``__init__.py``)."""
    found: dict[str, Path] = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root.parent).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(module: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """Modules of ``known`` that ``module`` imports anywhere in its file (module level, functions, TYPE_CHECKING),
    including ``OnDemand("module", "name")`` and ``importlib.import_module("literal")`` calls."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:  # ``from x import y``: y is the submodule x.y when there is one
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ("OnDemand", "import_module") and isinstance(node.args[0].value, str):
                targets.add(node.args[0].value)
    resolved = set()
    for target in targets:  # ``import a.b.c`` of a name that is not a module: the longest prefix that is
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != module:
            resolved.add(target)
    return resolved


def import_graph(roots: Sequence[Path]) -> dict[str, set[str]]:
    """Module -> the modules of the same roots it imports."""
    known = module_names(roots)
    return {module: _imports(module, path, known) for module, path in known.items()}


def import_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One circle (``a -> b -> ... -> a``) per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            child = next((c for c in edges if c in graph), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return [_circle(graph, set(c)) for c in components]


def _circle(graph: Mapping[str, Iterable[str]], members: set[str]) -> list[str]:
    """A shortest circle through the component's first module (breadth-first within the component)."""
    start = min(members)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child in members and child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    return [start]


def test_the_finder_sees_a_circle_through_lazy_and_on_demand_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (package / "c.py").write_text("import importlib\nX = OnDemand('pkg.d', 'g')\n")
    (package / "d.py").write_text("def g():\n    return importlib.import_module('pkg.a')\n")
    (package / "e.py").write_text("from pkg.a import name_not_a_module\n")
    graph = import_graph([package])
    assert graph["pkg.e"] == {"pkg.a"} and graph["pkg.sub.b"] == {"pkg.c"}
    assert import_cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.d", "pkg.a"]]


def test_the_engine_has_no_import_circle() -> None:
    cycles = import_cycles(import_graph(ROOTS))
    assert cycles == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)
