"""The LangGraph store, held to LangGraph's own semantics: every case runs against the real
``InMemoryStore`` (with the same embedder) and against :class:`RecalleryStore` over the SDK,
side by side. Then what only recallery has: where items live, erasure, and the key deciding
what exists and what may change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore
from tests.support.integrations import DIARY_SECRET, World

from recallery import Forbidden, InvalidInput, NotFound, SearchRequest
from recallery.integrations.langgraph import RecalleryStore
from recallery.testing import DeterministicEmbedder

NS = ("memories", "u-42")
Factory = Callable[..., BaseStore]


@pytest.fixture(params=["InMemoryStore", "RecalleryStore"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def build(kind: str, world: World, embedder: DeterministicEmbedder, **options: Any) -> BaseStore:
    """A fresh store of a kind (recallery's in Alice's notes, through either SDK client)."""
    if kind == "InMemoryStore":
        embed = lambda texts: embedder.embed(texts).tolist()  # noqa: E731
        return InMemoryStore(index={"dims": embedder.dimension, "embed": embed})
    client = world.async_client() if kind.endswith("AsyncClient") else world.client()
    return RecalleryStore(client, world.notes.id, **options)


@pytest.fixture
def make(kind: str, world: World, embedder: DeterministicEmbedder) -> Factory:
    return lambda **options: build(kind, world, embedder, **options)


@pytest.fixture
def kv(make: Factory) -> BaseStore:
    return make()


def keys(found: list[Any]) -> list[str]:
    return [i.key for i in found]


def test_get_finds_exact_keys(kv: BaseStore) -> None:
    kv.put(("users", "u1"), "profile", {"name": "Ada", "n": 1})
    kv.put(("users", "u1"), "profile.v2", {"name": "Bea"})
    kv.put(("users", "u2"), "profile", {"name": "Cy"})
    kv.put(("users",), "profile", {"name": "Root"})
    item = kv.get(("users", "u1"), "profile")
    assert item is not None and item.value == {"name": "Ada", "n": 1}
    assert (item.namespace, item.key) == (("users", "u1"), "profile")
    assert item.created_at <= item.updated_at
    assert kv.get(("users", "u1"), "profile.v2").value == {"name": "Bea"}  # type: ignore[union-attr]
    assert kv.get(("users", "u2"), "profile").value == {"name": "Cy"}  # type: ignore[union-attr]
    assert kv.get(("users",), "profile").value == {"name": "Root"}  # type: ignore[union-attr]
    for namespace, key in [(("users", "u1"), "prof"), (("users", "u1"), "PROFILE"),
                           (("users", "u3"), "profile"), (("users", "u1", "x"), "profile"),
                           (("users", "u1"), "profile.v")]:  # fmt: skip
        assert kv.get(namespace, key) is None, (namespace, key)


def test_put_replaces_the_value(kv: BaseStore) -> None:
    kv.put(NS, "home", {"text": "The user lives in Lyon"})
    first = kv.get(NS, "home")
    kv.put(NS, "home", {"text": "The user lives in Berlin"})
    now = kv.get(NS, "home")
    assert first is not None and now is not None
    assert now.value == {"text": "The user lives in Berlin"}
    assert now.updated_at >= first.updated_at and now.created_at <= now.updated_at
    assert [i.value for i in kv.search(NS)] == [now.value]
    assert [i.value for i in kv.search(NS, query="Lyon")] == [now.value]


def test_put_none_and_delete_remove_a_key(kv: BaseStore) -> None:
    kv.put(NS, "a", {"text": "apples"})
    kv.put(NS, "b", {"text": "bananas"})
    kv.put(NS, "c", {"text": "cherries"})
    kv.put(NS, "a", None)  # type: ignore[arg-type]
    kv.delete(NS, "b")
    kv.delete(NS, "never-there")
    assert kv.get(NS, "a") is None and kv.get(NS, "b") is None
    assert keys(kv.search(NS)) == ["c"]
    assert keys(kv.search(NS, query="apples bananas")) == ["c"]


def seed_facts(kv: BaseStore) -> None:
    facts = {
        "f1": {"kind": "fact", "score": 1, "meta": {"lang": "en"}, "tags": ["a", "b"]},
        "f2": {"kind": "fact", "score": 2.5, "meta": {"lang": "de"}, "tags": ["a"]},
        "f3": {"kind": "event", "score": 3, "meta": {"lang": "en", "x": 1}, "tags": []},
        "f4": {"kind": "event", "score": 4, "meta": {"lang": "fr"}, "tags": ["b", "a"]},
        "f5": {"kind": "rule", "score": 5, "meta": {}, "tags": ["a", "b"]},
    }
    for key, value in facts.items():
        kv.put(NS, key, value)
    kv.put(("elsewhere",), "f6", {"kind": "fact", "score": 1})


FILTERS: list[tuple[dict[str, Any], set[str]]] = [
    ({"kind": "fact"}, {"f1", "f2"}),
    ({"kind": {"$eq": "event"}}, {"f3", "f4"}),
    ({"kind": {"$ne": "fact"}}, {"f3", "f4", "f5"}),
    ({"score": {"$gt": 2.5}}, {"f3", "f4", "f5"}),
    ({"score": {"$gte": 2.5}}, {"f2", "f3", "f4", "f5"}),
    ({"score": {"$lt": 3}}, {"f1", "f2"}),
    ({"score": {"$lte": 3}}, {"f1", "f2", "f3"}),
    ({"score": {"$gt": 1, "$lt": 4}}, {"f2", "f3"}),
    ({"meta": {"lang": "en"}}, {"f1", "f3"}),
    ({"tags": ["a", "b"]}, {"f1", "f5"}),
    ({"kind": "event", "score": {"$gte": 4}}, {"f4"}),
    ({"kind": "nothing"}, set()),
]


@pytest.mark.parametrize(("wanted", "expected"), FILTERS, ids=[str(f) for f, _ in FILTERS])
def test_filters_select_what_langgraph_selects(
    kv: BaseStore, wanted: dict[str, Any], expected: set[str]
) -> None:
    seed_facts(kv)
    assert set(keys(kv.search(NS, filter=wanted, limit=50))) == expected
    ranked = kv.search(NS, query="fact event", filter=wanted, limit=50)
    assert set(keys(ranked)) == expected


def test_limit_and_offset_page_through_every_item(kv: BaseStore) -> None:
    for n in range(7):
        kv.put(NS, f"k{n}", {"text": f"note number {n} about tea"})
    for query in (None, "tea"):
        pages = [kv.search(NS, query=query, limit=3, offset=o) for o in (0, 3, 6, 9)]
        assert [len(p) for p in pages] == [3, 3, 1, 0]
        seen = [k for p in pages for k in keys(p)]
        assert sorted(seen) == [f"k{n}" for n in range(7)]


def seed_spaces(kv: BaseStore) -> None:
    for namespace in [("docs",), ("docs", "a"), ("docs", "a", "b"), ("docsx",),
                      ("other", "docs"), ("other", "x", "docs")]:  # fmt: skip
        kv.put(namespace, "k", {"where": ".".join(namespace)})


def test_search_covers_a_namespace_prefix(kv: BaseStore) -> None:
    seed_spaces(kv)

    def where(prefix: tuple[str, ...], query: str | None = None) -> set[str]:
        return {i.value["where"] for i in kv.search(prefix, query=query)}

    assert where(("docs",)) == {"docs", "docs.a", "docs.a.b"}
    assert where(("docs", "a")) == {"docs.a", "docs.a.b"}
    assert where(("docs",), "docs") == {"docs", "docs.a", "docs.a.b"}
    assert where(("docs", "a", "b"), "docs") == {"docs.a.b"}
    assert where(()) == {"docs", "docs.a", "docs.a.b", "docsx", "other.docs", "other.x.docs"}
    assert where(("nothing",)) == set()


def test_list_namespaces_as_langgraph_lists_them(kv: BaseStore) -> None:
    seed_spaces(kv)
    everything = [("docs",), ("docs", "a"), ("docs", "a", "b"), ("docsx",),
                  ("other", "docs"), ("other", "x", "docs")]  # fmt: skip
    assert kv.list_namespaces() == everything
    assert kv.list_namespaces(prefix=("docs",)) == everything[:3]
    assert kv.list_namespaces(suffix=("docs",)) == [("docs",), ("other", "docs"),
                                                    ("other", "x", "docs")]  # fmt: skip
    assert kv.list_namespaces(prefix=("other", "*")) == everything[4:]
    assert kv.list_namespaces(prefix=("*", "a")) == [("docs", "a"), ("docs", "a", "b")]
    assert kv.list_namespaces(max_depth=1) == [("docs",), ("docsx",), ("other",)]
    assert kv.list_namespaces(prefix=("docs",), max_depth=2) == [("docs",), ("docs", "a")]
    assert kv.list_namespaces(limit=2, offset=1) == everything[1:3]


def test_a_query_ranks_the_best_match_first(kv: BaseStore) -> None:
    kv.put(NS, "home", {"text": "The user lives in Berlin, near the river"})
    kv.put(NS, "tea", {"text": "The user drinks green tea every morning"})
    kv.put(NS, "cat", {"text": "The cat is called Tom"})
    found = kv.search(NS, query="where does the user live? Berlin river")
    assert keys(found)[0] == "home"
    assert all(i.score is not None for i in found)
    assert found[0].score >= max(i.score for i in found[1:])  # type: ignore[operator,type-var]


def test_a_deleted_or_replaced_value_never_ranks_again(kv: BaseStore) -> None:
    """LangGraph's SQLite store keeps ranking a deleted key's vector (an open bug there)."""
    kv.put(NS, "vault", {"text": "the vault code is 4711"})
    kv.put(NS, "moved", {"text": "the vault code is 4711 until Monday"})
    kv.put(NS, "garden", {"text": "tomatoes grow in the garden"})
    assert set(keys(kv.search(NS, query="vault code 4711"))[:2]) == {"vault", "moved"}
    kv.delete(NS, "vault")
    kv.put(NS, "moved", {"text": "the bicycle is in the shed"})
    found = kv.search(NS, query="vault code 4711")
    assert sorted(keys(found)) == ["garden", "moved"]
    assert not any("4711" in str(i.value) for i in found)


def test_a_batch_reads_the_store_as_it_was_and_the_last_put_wins(kv: BaseStore) -> None:
    first = kv.batch([PutOp(NS, "k", {"v": 1}), GetOp(NS, "k"), PutOp(NS, "k", {"v": 2})])
    assert first == [None, None, None]
    assert kv.get(NS, "k").value == {"v": 2}  # type: ignore[union-attr]
    second = kv.batch([GetOp(NS, "k"), PutOp(NS, "k", None)])
    assert second[0].value == {"v": 2}  # type: ignore[union-attr]
    assert kv.get(NS, "k") is None


@pytest.mark.parametrize(
    "which", ["InMemoryStore", "RecalleryStore over Client", "RecalleryStore over AsyncClient"]
)
def test_the_async_api(which: str, world: World, embedder: DeterministicEmbedder) -> None:
    store = build(which, world, embedder)

    async def check() -> None:
        await store.aput(NS, "home", {"text": "The user lives in Berlin"})
        await store.aput(("other",), "x", {"text": "unrelated"})
        item = await store.aget(NS, "home")
        assert item is not None and item.value == {"text": "The user lives in Berlin"}
        assert keys(await store.asearch(NS, query="Berlin")) == ["home"]
        assert await store.alist_namespaces() == [NS, ("other",)]
        await store.adelete(NS, "home")
        assert await store.aget(NS, "home") is None

    anyio.run(check)


# --- what only recallery has ------------------------------------------------------------


def test_items_are_raw_turns_of_the_memory_and_a_replaced_one_is_erased(world: World) -> None:
    store = RecalleryStore(world.client(), world.notes.id)
    store.put(("users", "u1"), "home.city", {"text": "Lyon"})
    (old,) = world.turns(world.notes)
    assert (old.agent_id, old.session_id) == ("users.u1", "users.u1.home.city")
    assert old.content == 'User Input: {"text": "Lyon"}\nAgent Response: '
    store.put(("users", "u1"), "home.city", {"text": "Berlin"})
    (new,) = world.turns(world.notes)
    assert new.content == 'User Input: {"text": "Berlin"}\nAgent Response: '
    assert new.valid_at == old.valid_at.replace(microsecond=0)  # created_at is kept
    with pytest.raises(NotFound):
        world.engine.get_entry(world.alice, world.notes.id, old.message_id)
    store.delete(("users", "u1"), "home.city")
    assert world.turns(world.notes) == []
    found = world.engine.search(world.alice, SearchRequest("Lyon Berlin", (world.notes.id,),
                                                           similarity_threshold=0))  # fmt: skip
    assert found == []


def test_the_limits_of_the_mapping(world: World) -> None:
    store = RecalleryStore(world.client(), world.notes.id)
    with pytest.raises(InvalidInput, match="255 bytes"):
        store.put(NS, "k" * 300, {"text": "too long"})
    assert store.get(NS, "k" * 300) is None and world.turns(world.notes) == []
    with pytest.raises(TypeError, match=r"recallery\.Client"):
        RecalleryStore(world.async_client(), world.notes.id).get(NS, "k")


def test_a_turn_changed_by_hand_or_disabled_holds_no_item(world: World) -> None:
    store = RecalleryStore(world.client(), world.notes.id)
    store.put(NS, "home", {"text": "Berlin"})
    store.put(NS, "tea", {"text": "green tea"})
    home, tea = sorted(world.turns(world.notes), key=lambda t: t.session_id)
    e, me, notes = world.engine, world.alice, world.notes.id
    e.correct(me, notes, home.message_id, "The user lives in Berlin.")
    e.set_status(me, notes, tea.message_id, False)
    assert store.get(NS, "home") is None and store.get(NS, "tea") is None
    assert store.search(NS) == [] and store.search(NS, query="Berlin tea") == []
    assert store.list_namespaces() == []
    store.put(NS, "home", {"text": "Lyon"})
    assert store.get(NS, "home").value == {"text": "Lyon"}  # type: ignore[union-attr]
    assert keys(store.search(NS)) == ["home"]
    assert [c for _, c in world.contents(world.notes)] == [
        'User Input: {"text": "Lyon"}\nAgent Response: ',
        'User Input: {"text": "green tea"}\nAgent Response: ',
    ]


def test_without_erase_a_read_write_key_corrects_and_forgets(world: World) -> None:
    key = world.key(capabilities=["read", "write"])
    store = RecalleryStore(world.client(key), world.notes.id, erase=False)
    store.put(NS, "home", {"text": "Lyon"})
    store.put(NS, "home", {"text": "Berlin"})
    (turn,) = world.turns(world.notes)
    history = world.engine.history(world.alice, world.notes.id, turn.message_id)
    assert [h.content for h in history] == [
        'User Input: {"text": "Lyon"}\nAgent Response: ',
        'User Input: {"text": "Berlin"}\nAgent Response: ',
    ]
    assert store.get(NS, "home").value == {"text": "Berlin"}  # type: ignore[union-attr]
    store.delete(NS, "home")
    assert store.get(NS, "home") is None and store.search(NS, query="Berlin") == []
    (forgotten,) = world.turns(world.notes)
    assert forgotten.forget_at is not None

    erasing = RecalleryStore(world.client(key), world.notes.id)
    erasing.put(NS, "other", {"text": "tea"})
    with pytest.raises(Forbidden, match="manage"):
        erasing.delete(NS, "other")
    assert erasing.get(NS, "other").value == {"text": "tea"}  # type: ignore[union-attr]


def test_a_key_scoped_to_one_memory_gets_nothing_of_another(world: World) -> None:
    RecalleryStore(world.client(), world.diary.id).put(NS, "code", {"text": DIARY_SECRET})
    scoped = world.client(world.key(scope=[world.notes.id]))
    before = world.contents(world.diary)
    for memory in (world.diary, world.bobs):
        named = RecalleryStore(scoped, memory.id)
        for attempt in (
            lambda s: s.get(NS, "code"),
            lambda s: s.search(NS, query="door code 4711"),
            lambda s: s.search((), filter={"text": DIARY_SECRET}),
            lambda s: s.list_namespaces(),
            lambda s: s.put(NS, "code", {"text": "overwritten"}),
            lambda s: s.delete(NS, "code"),
        ):
            with pytest.raises(NotFound):
                attempt(named)
    assert world.contents(world.diary) == before
    RecalleryStore(world.client(), world.notes.id).put(NS, "home", {"text": "Berlin notes"})
    own = RecalleryStore(scoped, world.notes.id)
    found = own.search((), query="Berlin diary door code 4711")
    assert [(i.namespace, i.key, i.value) for i in found] == [
        (NS, "home", {"text": "Berlin notes"})
    ]
    assert own.list_namespaces() == [NS] and own.get(NS, "code") is None


def test_a_read_only_key_reads_but_cannot_write(world: World) -> None:
    RecalleryStore(world.client(), world.notes.id).put(NS, "home", {"text": "Berlin"})
    before = world.contents(world.notes)
    reader = RecalleryStore(world.client(world.key(capabilities=["read"])), world.notes.id)
    assert reader.get(NS, "home").value == {"text": "Berlin"}  # type: ignore[union-attr]
    assert keys(reader.search(NS, query="Berlin")) == ["home"]
    for attempt in (
        lambda s: s.put(NS, "home", {"text": "Lyon"}),
        lambda s: s.put(NS, "new", {"text": "Lyon"}),
        lambda s: s.delete(NS, "home"),
    ):
        with pytest.raises(Forbidden, match=r"write|manage"):
            attempt(reader)
    assert world.contents(world.notes) == before


def test_dotted_filter_keys_name_nested_values(world: World) -> None:
    store = RecalleryStore(world.client(), world.notes.id)
    store.put(NS, "a", {"user": {"access-level": "admin", "name": "Ada"}})
    store.put(NS, "b", {"user": {"access-level": "guest"}})
    store.put(NS, "c", {"user": "admin"})
    store.put(NS, "d", {"user.access-level": "admin"})  # a field whose name holds a dot
    assert sorted(keys(store.search(NS, filter={"user.access-level": "admin"}))) == ["a", "d"]
    assert keys(store.search(NS, filter={"user.access-level": {"$ne": "admin"}})) == ["c", "b"]
    assert keys(store.search(NS, filter={"user.name": "Ada"})) == ["a"]


def test_an_item_put_without_an_index_is_listed_but_never_scored(world: World) -> None:
    store = RecalleryStore(world.client(), world.notes.id)
    store.put(NS, "plain", {"text": "the vault code is 4711"}, index=False)
    store.put(NS, "ranked", {"text": "the garden has tomatoes"})
    assert store.get(NS, "plain").value == {"text": "the vault code is 4711"}  # type: ignore[union-attr]
    found = store.search(NS, query="vault code 4711")
    assert [(i.key, i.score is None) for i in found] == [("ranked", False), ("plain", True)]
    store.put(NS, "plain", {"text": "the vault code is 4711"})  # indexed from now on
    assert keys(store.search(NS, query="vault code 4711"))[0] == "plain"


@pytest.mark.parametrize("label", ["", "a.b", "nul\x00"])
def test_a_label_langgraph_refuses_is_refused_on_every_path(world: World, label: str) -> None:
    """As LangGraph's own stores: a label "a.b" must never address ("a", "b"), whether it
    comes through get, search, delete, list_namespaces or a batch of operations."""
    store = RecalleryStore(world.client(), world.notes.id)
    bad = ("ok", label)
    for call in (
        lambda: store.get(bad, "k"),
        lambda: store.search(bad),
        lambda: store.delete(bad, "k"),
        lambda: store.list_namespaces(prefix=bad),
        lambda: store.batch([GetOp(bad, "k")]),
        lambda: store.batch([SearchOp(bad)]),
    ):
        with pytest.raises(InvalidNamespaceError):
            call()
