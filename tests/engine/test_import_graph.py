"""The house order, checked: imports flow inwards through the house's layers, with no circle,
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

#: The layers from the inside out (issue 56); a module may import its own layer or an inner
#: one only. A name covers the module and everything under it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # plain types, errors, decisions and settings every room shares
    ("kernel", ("models", "errors", "access", "settings", "clock", "audit", "validation")),
    # the whose-fact rule, pure: the store checks it as every domain room does
    ("kernel", ("ownership",)),
    ("kernel", ("extras", "text")),
    # what adapters build and read (requests/) and its JSON (wire/); the moved modules'
    # aliases stay here for their release
    ("requests/wire", ("requests", "wire", "requestlog", "subjects", "people")),
    # the store port with its backends, and the model providers with the listeners they
    # report to (observe)
    ("store/providers", ("store", "providers", "observe")),
    # rules over plain data: retrieval, extraction, policies, and the job protocol
    ("domain", ("retrieval", "extraction", "policies", "jobs")),
    ("services", ("services",)),
    ("engine", ("engine", "acting")),
    # the HTTP edge REST, the web UI and MCP share: guard, throttle, declared kinds
    ("edge", ("web.edge", "throttle")),
    ("adapters", ("api", "web", "mcp", "cli", "client", "integrations", "__main__")),
)
ORDER = list(dict.fromkeys(name for name, _ in LAYERS))
#: The adapter packages: each may use another in one direction only (the REST app installs
#: the web UI; the command line serves both).
ADAPTERS = tuple(f"recallery.{p}" for name, ps in LAYERS if name == "adapters" for p in ps)
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


def _layer(name: str) -> str:
    """The layer of a module by :data:`LAYERS`; the package root (its public names) is an
    adapter's. A module no layer names fails: each new room is placed on purpose."""
    if name == "recallery":
        return "adapters"
    for layer, packages in LAYERS:
        if _within(name, tuple(f"recallery.{p}" for p in packages)):
            return layer
    raise AssertionError(f"{name} is in no layer of LAYERS")


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


def test_every_module_is_in_a_layer() -> None:
    assert {_layer(name) for name in GRAPH} == set(ORDER)


def test_imports_point_inwards() -> None:
    outward = {
        f"{name} -> {dep}"
        for name, deps in sorted(GRAPH.items())
        for dep in sorted(deps)
        if ORDER.index(_layer(dep)) > ORDER.index(_layer(name)) and not _within(dep, SUPPORT)
    }
    assert sorted(outward) == []


def test_the_layer_test_sees_a_misplaced_import() -> None:
    """Today's kinds of misplacement each point outwards (the web UI reaching into the REST
    adapter's edge was one: now the shared edge)."""
    assert ORDER.index(_layer("recallery.web.edge.guard")) < ORDER.index(_layer("recallery.web"))
    misplaced = [
        # the store once read slots from retrieval/ (they now live in text/, the kernel)
        ("recallery.store.supersession", "recallery.retrieval.context"),
        ("recallery.wire.jobs", "recallery.extraction.runs"),
        ("recallery.services.backup", "recallery.engine"),
        ("recallery.web.edge.guard", "recallery.api.app"),
    ]
    for inner, outer in misplaced:
        assert inner in MODULES and outer in MODULES, (inner, outer)  # never a stale name
        assert ORDER.index(_layer(inner)) < ORDER.index(_layer(outer)), (inner, outer)


def test_adapter_packages_use_each_other_one_way() -> None:
    """No circle between adapter packages either: the web UI does not import the REST API,
    which installs it; what both need is the shared edge."""

    def package(name: str) -> str:
        return ".".join(name.split(".")[:2])

    uses = {
        (package(name), package(dep))
        for name, deps in GRAPH.items()
        if _within(name, ADAPTERS)
        for dep in deps
        if _within(dep, ADAPTERS) and package(dep) != package(name)
    }
    assert ("recallery.api", "recallery.web") in uses
    both_ways = sorted(f"{a} <-> {b}" for a, b in uses if (b, a) in uses)
    assert both_ways == []


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
