"""Which room a kind of code lives in, checked (issue 56): JSON shapes in ``wire/``, types in
the kernel or ``requests/``, backend packages behind the store port.

Each rule lists what still breaks it today and is being moved (``PENDING``); the list must
match what is found exactly, so a new breach fails, and so does a moved one left listed.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "recallery"


def _name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


#: Every module but the shipped test support (fakes may do anything a test does).
MODULES = {
    _name(p): ast.parse(p.read_text("utf-8"))
    for p in sorted(PACKAGE.rglob("*.py"))
    if not _within(_name(p), ("recallery.testing",))
}

#: The kernel: the modules at the package top that may define types.
KERNEL = ("models", "errors", "access", "jobs", "settings", "clock", "audit", "validation")
#: The backend packages: only the store package itself (and its factory) imports them.
BACKENDS = ("recallery.store.sqlite", "recallery.store.postgres")

#: Still outside their rooms, each to move (issue 56, step 4 and 5).
PENDING_SHAPES: set[str] = set()
PENDING_TOP_TYPES: set[str] = set()
PENDING_BACKEND_IMPORTS: set[str] = set()


def _is_dataclass(node: ast.ClassDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if getattr(target, "id", None) == "dataclass" or getattr(target, "attr", None) == (
            "dataclass"
        ):
            return True
    return False


def _imported(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_json_shapes_are_written_in_wire_only() -> None:
    """A ``*_dict`` / ``*_from_dict`` function is a JSON shape: one per thing, in wire/."""
    shaping = {
        name
        for name, tree in MODULES.items()
        if not _within(name, ("recallery.wire",))
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.endswith(("_dict", "_from_dict"))
    }
    assert shaping == PENDING_SHAPES


def test_only_the_kernel_defines_types_at_the_package_top() -> None:
    """A dataclass at the package top is the kernel's; a feature's types live in
    ``requests/`` (what adapters build and read) or beside the code that owns them."""
    kernel = {f"recallery.{k}" for k in KERNEL}
    typed = {
        name
        for name, tree in MODULES.items()
        if name.count(".") == 1 and name not in kernel
        for node in tree.body
        if isinstance(node, ast.ClassDef) and _is_dataclass(node)
    }
    assert typed == PENDING_TOP_TYPES


def test_nothing_outside_the_store_imports_a_backend() -> None:
    """Backends are chosen in one place (``recallery.store.open_store``); whatever needs
    backend work asks the store for it."""
    reaching = {
        name
        for name, tree in MODULES.items()
        if not _within(name, ("recallery.store",))
        and any(_within(dep, BACKENDS) for dep in _imported(tree))
    }
    assert reaching == PENDING_BACKEND_IMPORTS
