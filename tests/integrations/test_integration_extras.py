"""An adapter imported without its extra ends in one line naming what to install (the
framework hidden: ``sys.modules[name] = None`` makes it unimportable)."""

from __future__ import annotations

import importlib
import sys

import pytest

from recallery.errors import MissingExtra

ADAPTERS = [
    ("recallery.integrations.langgraph", "langgraph", "langgraph"),
    ("recallery.integrations.openai_agents", "agents", "openai-agents"),
    ("recallery.integrations.adk", "google.adk", "adk"),
    ("recallery.integrations.llamaindex", "llama_index.core", "llamaindex"),
]


@pytest.mark.parametrize(("module", "framework", "extra"), ADAPTERS, ids=[a[0] for a in ADAPTERS])
def test_an_adapter_without_its_extra_is_one_line(
    monkeypatch: pytest.MonkeyPatch, module: str, framework: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, framework, None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(MissingExtra) as raised:
        importlib.import_module(module)
    assert (
        str(raised.value)
        == f'{module} needs the {extra} extra: pip install ".[{extra}]" in a clone of recallery '
        "(it is not on PyPI yet)"
    )
    assert (raised.value.extra, raised.value.name) == (extra, framework)


def test_the_shared_parts_need_no_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    for framework in {a[1] for a in ADAPTERS}:
        monkeypatch.setitem(sys.modules, framework, None)
    for shared in ("recallery.integrations.base", "recallery.integrations.matching"):
        monkeypatch.delitem(sys.modules, shared, raising=False)
        assert importlib.import_module(shared).__all__
