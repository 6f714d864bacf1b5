"""The product's import graph, read from the source with ``ast`` (nothing is imported): one node per module, an
arrow per import at module level or inside a function, plus the imports named by strings (``OnDemand("m", "n")``,
``import_module("m")``). Imports under ``if TYPE_CHECKING:`` are marked ``type_only``: they never run, so the
rank rules pass them over, but a circle through them still ties the modules together. The layer tests
(tests/test_layers.py) check their rules and look for circles on it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: folder -> the dotted name it installs as (service/ and workers/ are linked into evalserve/)
PACKAGES = {"evaluation": "evaluation", "evalserve": "evalserve", "service": "evalserve.service",
            "workers": "evalserve.workers"}
#: calls whose first argument names a module that is imported when they run
STRING_IMPORTS = {"OnDemand", "import_module"}


@dataclass(frozen=True)
class Import:
    """One import in ``source`` (a file) of ``module`` (dotted), at ``line``; ``by_string``: named in a call."""

    source: Path
    line: int
    module: str
    names: tuple[str, ...] = ()
    by_string: bool = False
    type_only: bool = False


@dataclass
class Graph:
    """Every product module (dotted name -> file) and every import found in them."""

    files: dict[str, Path] = field(default_factory=dict)
    imports: dict[str, list[Import]] = field(default_factory=dict)

    def resolve(self, imp: Import) -> set[str]:
        """The product modules ``imp`` loads: ``from a import b`` is ``a.b`` where that is a module, else ``a``."""
        out = set()
        for name in imp.names or ("",):
            full = f"{imp.module}.{name}" if name else imp.module
            if full in self.files:
                out.add(full)
            elif imp.module in self.files:
                out.add(imp.module)
        return out

    def arrows(self, *, type_only: bool = True) -> dict[str, set[str]]:
        """Module -> the modules it imports (``type_only``: with the imports that only the type checker runs)."""
        return {m: {t for i in imps if type_only or not i.type_only for t in self.resolve(i) if t != m}
                for m, imps in self.imports.items()}


def module_name(path: Path) -> str | None:
    """The dotted name ``path`` (a .py file of the checkout) installs as, or None outside the product."""
    rel = path.relative_to(ROOT)
    top = PACKAGES.get(rel.parts[0])
    if top is None or rel.parts[:2] in (("evalserve", "service"), ("evalserve", "workers")):
        return None  # the links are read once, under their own folders
    parts = [top, *rel.parts[1:-1]] + ([] if rel.name == "__init__.py" else [rel.stem])
    return ".".join(parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def imports_of(path: Path, module: str) -> Iterator[Import]:
    """Every import ``path`` makes (relative imports resolved against ``module``)."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = _type_checking_lines(tree)  # imports the type checker alone runs
    package = _package_of(module, path.name == "__init__.py")
    for node in ast.walk(tree):
        type_only = getattr(node, "lineno", None) in skipped
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(path, node.lineno, alias.name, type_only=type_only)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield Import(path, node.lineno, base, tuple(a.name for a in node.names), type_only=type_only)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in STRING_IMPORTS and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    second = node.args[1] if len(node.args) > 1 else None
                    names = (second.value,) if isinstance(second, ast.Constant) and called == "OnDemand" else ()
                    yield Import(path, node.lineno, first.value, tuple(str(n) for n in names), by_string=True)


def product_graph(folders: tuple[str, ...] = tuple(PACKAGES)) -> Graph:
    """The import graph of the product code under ``folders`` (tests, migrations and benchmarks left out)."""
    graph = Graph()
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" in path.parts or path.is_symlink():
                continue
            name = module_name(path)
            if name is not None:
                graph.files[name] = path
    for name, path in graph.files.items():
        graph.imports[name] = list(imports_of(path, name))
    return graph


def cycles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:  # iterative, so a deep graph cannot overflow the interpreter's stack
        nonlocal counter
        work = [(start, iter(sorted(arrows.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(arrows.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(arrows):
        if node not in index:
            visit(node)
    return found
