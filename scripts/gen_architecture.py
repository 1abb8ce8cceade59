"""The import graph of ``python/fastnotebook`` and the drawing of it in
docs/ARCHITECTURE.md.

    python scripts/gen_architecture.py           # rewrite the drawing
    python scripts/gen_architecture.py --check   # exit 1 if the drawing is not current
                                                 # or an import breaks the rules

The graph is read from the source with ``ast`` (nothing is imported): an edge
``a -> b`` for every ``import``/``from ... import`` in module ``a`` of a module
``b`` of the package, at any depth (imports inside functions count). The
rules (docs/ARCHITECTURE.md):

- no circle among the modules, imports under ``if TYPE_CHECKING:`` aside
  (they run only under the type checker);
- no import from the library into the application (``fastnotebook.app``),
  type-only imports included.

The drawing shows the packages (and the library's top-level modules as one
box) and which import which; it sits between ``<!-- graph:begin -->`` and
``<!-- graph:end -->``.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "fastnotebook"
DOC = ROOT / "docs" / "ARCHITECTURE.md"
BEGIN, END = "<!-- graph:begin -->", "<!-- graph:end -->"

#: Modules of the application layer outside ``fastnotebook.app``: the
#: ``python -m fastnotebook`` entry point runs the command line.
APP_ENTRY_POINTS = frozenset({"fastnotebook.__main__"})

#: The boxes of the drawing, bottom layer first: a module belongs to the
#: longest prefix listed; the library's top-level modules are "fastnotebook".
BOXES = (
    "fastnotebook",
    "fastnotebook.ai",
    "fastnotebook.notes",
    "fastnotebook.open_notebook",
    "fastnotebook.bench",
    "fastnotebook.app",
    "fastnotebook.app.database",
    "fastnotebook.app.domain",
    "fastnotebook.app.pipeline",
    "fastnotebook.app.vault",
    "fastnotebook.app.api",
    "fastnotebook.app.cli",
)


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    type_only: bool


@dataclass
class Graph:
    modules: set[str] = field(default_factory=set)
    imports: list[Import] = field(default_factory=list)

    def edges(self, type_only: bool = True) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {m: set() for m in sorted(self.modules)}
        for imp in self.imports:
            if type_only or not imp.type_only:
                out[imp.source].add(imp.target)
        return out


def module_names(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (``__init__`` is the package)."""
    names: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    for path in sorted(package.glob("_core*.so")) + sorted(package.glob("_core*.pyd")):
        names[f"{package.name}._core"] = path
    return names


def _type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, type_only: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, type_only
        elif _type_checking_block(child):
            assert isinstance(child, ast.If)
            for stmt in child.body:
                yield from _imports(ast.Module(body=[stmt], type_ignores=[]), True)
            for stmt in child.orelse:
                yield from _imports(ast.Module(body=[stmt], type_ignores=[]), type_only)
        else:
            yield from _imports(child, type_only)


def _targets(node: ast.AST, module: str, is_package: bool, known: set[str]) -> Iterator[str]:
    """The package's modules that an import statement loads by name."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                yield name
        return
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    for alias in node.names:
        submodule = f"{origin}.{alias.name}"
        if submodule in known:
            yield submodule
        elif origin in known:
            yield origin


def import_graph(package: Path = PACKAGE) -> Graph:
    """The package's modules and the imports among them."""
    names = module_names(package)
    known = set(names)
    graph = Graph(modules=known)
    for module, path in names.items():
        if path.suffix != ".py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node, type_only in _imports(tree):
            for target in sorted(set(_targets(node, module, is_package, known))):
                if target != module:
                    line = getattr(node, "lineno", 0)
                    graph.imports.append(Import(module, target, line, type_only))
    return graph


def _is_ancestor(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def circles(graph: Graph) -> list[list[str]]:
    """The import circles (strongly connected components of more than one
    module), type-only imports and imports of a module's own parent packages
    aside (a package's ``__init__`` runs before its modules)."""
    edges = {
        source: {t for t in targets if not _is_ancestor(t, source)}
        for source, targets in graph.edges(type_only=False).items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
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
                    work.append((child, iter(sorted(edges[child]))))
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
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(found)


def in_app(module: str) -> bool:
    return (
        module == "fastnotebook.app"
        or module.startswith("fastnotebook.app.")
        or (module in APP_ENTRY_POINTS)
    )


def upward_imports(graph: Graph) -> list[Import]:
    """Imports from the library into the application."""
    return [imp for imp in graph.imports if in_app(imp.target) and not in_app(imp.source)]


def box(module: str) -> str:
    if module in APP_ENTRY_POINTS:
        return "fastnotebook.app"
    best = "fastnotebook"
    for name in BOXES:
        if (module == name or module.startswith(name + ".")) and len(name) > len(best):
            best = name
    return best


def _node_id(name: str) -> str:
    return name.replace(".", "_")


def drawing(graph: Graph) -> str:
    """The Mermaid flowchart of the boxes and their imports (type-only
    imports included: they are dependencies too)."""
    links: set[tuple[str, str]] = set()
    for imp in graph.imports:
        a, b = box(imp.source), box(imp.target)
        if a != b and not (imp.target.endswith("._core")):
            links.add((a, b))
    lines = ["```mermaid", "flowchart BT"]
    labels = {
        "fastnotebook": "fastnotebook.* (drop-in modules)",
        "fastnotebook.app": "fastnotebook.app (+ __main__)",
    }
    for name in BOXES:
        lines.append(f'    {_node_id(name)}["{labels.get(name, name)}"]')
    lines.append('    fastnotebook__core[["fastnotebook._core (Rust bindings)"]]')
    lines.append("    fastnotebook --> fastnotebook__core")
    order = {name: i for i, name in enumerate(BOXES)}
    for a, b in sorted(links, key=lambda link: (order[link[0]], order[link[1]])):
        lines.append(f"    {_node_id(a)} --> {_node_id(b)}")
    lines.append("```")
    return "\n".join(lines) + "\n"


def problems(graph: Graph) -> list[str]:
    """Every broken rule, one line each (empty: the graph is sound)."""
    found = [f"import circle: {' <-> '.join(c)}" for c in circles(graph)]
    found += [
        f"the library imports the app: {imp.source} (line {imp.line}) -> {imp.target}"
        for imp in upward_imports(graph)
    ]
    return found


def render(document: str, graph: Graph) -> str:
    head, begin, rest = document.partition(BEGIN + "\n")
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise SystemExit(f"{DOC} has no {BEGIN} ... {END} block")
    return head + begin + drawing(graph) + end + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if not current")
    args = parser.parse_args(argv)
    graph = import_graph()
    broken = problems(graph)
    for line in broken:
        print(line, file=sys.stderr)
    document = DOC.read_text(encoding="utf-8")
    current = render(document, graph)
    if args.check:
        if current != document:
            print(f"{DOC.relative_to(ROOT)} is not current: run {Path(__file__).name}")
            return 1
        return 1 if broken else 0
    DOC.write_text(current, encoding="utf-8")
    print(f"wrote {DOC}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
