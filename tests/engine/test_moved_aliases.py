"""Modules moved to their rooms (issue 56) keep their old name for one release: the old module
warns when imported and hands out the very objects of the new ones."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from recallery.requests import requestlog as requestlog_types
from recallery.requests import subjects as subject_types
from recallery.wire import requestlog as requestlog_shapes
from recallery.wire import subjects as subject_shapes

#: Old module -> the modules its names now come from.
MOVED: dict[str, tuple[ModuleType, ...]] = {
    "recallery.requestlog": (requestlog_types, requestlog_shapes),
    "recallery.subjects": (subject_types, subject_shapes),
    "recallery.people": (subject_types,),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_warns_and_reexports_the_new_names(old: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match="moved"):
        module = importlib.import_module(old)
    new = [getattr(m, name) for m in MOVED[old] for name in m.__all__]
    for name in module.__all__:
        assert any(getattr(module, name) is obj for obj in new), name
        assert getattr(getattr(module, name), "__module__", None) != old, name


def _imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_nothing_in_the_package_imports_a_moved_module() -> None:
    """The package uses the new homes; only outside code meets the warning."""
    src = Path(__file__).resolve().parents[2] / "src"
    users = sorted(
        f"{p.relative_to(src)} -> {old}"
        for p in (src / "recallery").rglob("*.py")
        for old in sorted(MOVED.keys() & _imports(ast.parse(p.read_text("utf-8"))))
        if p.relative_to(src).with_suffix("").as_posix().replace("/", ".") != old
    )
    assert users == []
