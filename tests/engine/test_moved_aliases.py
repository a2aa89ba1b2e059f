"""Modules moved to their rooms (issue 56) keep their old name for one release: the old module
warns when imported and hands out the very objects of the new ones (a module moved whole,
like the HTTP edge's, is its new module under the old name)."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from recallery import ownership
from recallery.requests import gathered, runs
from recallery.requests import requestlog as requestlog_types
from recallery.requests import subjects as subject_types
from recallery.web.edge import bodies, declared, guard, params, responses, schemas, throttle
from recallery.wire import requestlog as requestlog_shapes
from recallery.wire import subjects as subject_shapes

#: Old module -> the modules its names now come from.
MOVED: dict[str, tuple[ModuleType, ...]] = {
    "recallery.requestlog": (requestlog_types, requestlog_shapes),
    "recallery.subjects": (subject_types, subject_shapes),
    "recallery.people": (subject_types,),
}
#: Old module -> the module it now is, moved whole.
MOVED_WHOLE: dict[str, ModuleType] = {
    "recallery.throttle": throttle,
    "recallery.retrieval.candidates": gathered,
    "recallery.policies.people": ownership,
    "recallery.extraction.runs": runs,
    **{
        f"recallery.api.{m.__name__.rsplit('.', 1)[1]}": m
        for m in (bodies, declared, guard, params, responses, schemas)
    },
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


@pytest.mark.parametrize("old", sorted(MOVED_WHOLE))
def test_a_module_moved_whole_is_the_new_one_under_its_old_name(old: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match="moved"):
        module = importlib.import_module(old)
    assert module is MOVED_WHOLE[old]
    assert sys.modules[old] is MOVED_WHOLE[old]  # so a patch of either name patches both


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
        for old in sorted(
            (MOVED.keys() | MOVED_WHOLE.keys()) & _imports(ast.parse(p.read_text("utf-8")))
        )
        if p.relative_to(src).with_suffix("").as_posix().replace("/", ".") != old
    )
    assert users == []
