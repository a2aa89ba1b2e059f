"""The house order, checked: imports flow adapters → engine → services → core, with no circle,
and no module grows past what one reader can hold.

Every ``import`` in ``src/recallery`` counts, at module level or inside a function, and under
``TYPE_CHECKING`` too: a deferred import is still an arrow between two rooms.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "recallery"

#: Layers from the outside in; a module may import its own layer or an inner one only.
ADAPTERS = ("recallery.api", "recallery.cli", "recallery.__main__", "recallery.client")
ADAPTERS += ("recallery.web", "recallery.mcp", "recallery.integrations")
#: Shipped test support (fakes, the conformance suite) may use everything, like a test.
SUPPORT = ("recallery.testing",)
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _layer(name: str) -> int:
    """1: adapters and the package root (its public names); 2: the engine; 3: services;
    4: the core."""
    if name == "recallery" or _within(name, ADAPTERS):
        return 1
    if name in ("recallery.engine", "recallery.acting"):
        return 2
    if _within(name, ("recallery.services",)):
        return 3
    return 4


def _imports(name: str) -> set[str]:
    """recallery modules that ``name`` imports (``from pkg import mod`` names the module)."""
    tree = ast.parse(MODULES[name].read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("recallery"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith("recallery"):
                continue
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in MODULES else node.module)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: _imports(name) for name in MODULES if not _within(name, SUPPORT)}


def test_the_graph_is_read() -> None:
    assert "recallery.store.base" in GRAPH["recallery.engine"]
    assert "recallery.retrieval.usage" in GRAPH["recallery.engine"]
    assert "recallery.models" in GRAPH["recallery.requests.search"]


def test_no_import_circle() -> None:
    """Depth-first search for a back edge; the circle found is named in the failure."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        stack.append(name)
        for dep in sorted(GRAPH.get(name, ())):
            if dep not in GRAPH:
                continue
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (circle := visit(dep)):
                return circle
        stack.pop()
        state[name] = 2
        return None

    for name in sorted(GRAPH):
        if name not in state and (circle := visit(name)):
            pytest.fail("import circle: " + " -> ".join(circle))


def test_imports_point_inwards() -> None:
    outward = [
        f"{name} -> {dep}"
        for name, deps in sorted(GRAPH.items())
        for dep in sorted(deps)
        if _layer(dep) < _layer(name) and not _within(dep, SUPPORT)
    ]
    assert outward == []


def test_nothing_outside_testing_imports_the_test_support() -> None:
    leaks = [
        f"{name} -> {dep}"
        for name, deps in sorted(GRAPH.items())
        for dep in sorted(deps)
        if _within(dep, SUPPORT)
    ]
    assert leaks == []


def test_modules_stay_small() -> None:
    long = {
        name: n
        for name, path in MODULES.items()
        if (n := len(path.read_text("utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_retrieval_ranking_stages_import_nothing_from_store() -> None:
    """Search in two steps (DESIGN 7.1, STYLE 21): the store is read once, then the ranking
    stages run over plain data; a stage that needs the store is a gather left incomplete.
    Only the use recorder, which writes retrievals off the request path, reaches the store."""
    ranking = [n for n in GRAPH if _within(n, ("recallery.retrieval",))]
    assert "recallery.retrieval.stages" in ranking
    reaching = [
        f"{name} -> {dep}"
        for name in sorted(ranking)
        if name != "recallery.retrieval.usage"
        for dep in sorted(GRAPH[name])
        if _within(dep, ("recallery.store",))
    ]
    assert reaching == []
