"""The web's memory pages say when a memory's newest text is in a script its embedder cannot
read (issue 52 item 2): a Chinese or Russian turn in a memory on the English-only local model
shows the warning on every tab; an English memory beside it, however much such text the other
holds, shows none."""

from __future__ import annotations

from tests.support.web import Login

from recallery import Engine, Memory, Principal


def test_a_memory_page_warns_of_text_its_embedder_cannot_read(
    engine: Engine, alice: Principal, notes: Memory, login: Login, alice_key: str
) -> None:
    english = engine.create_memory(
        alice, name="english", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
    )
    engine.add_turn(alice, [english.id], user_input="I live in Lyon", agent_response="OK")
    engine.add_turn(
        alice, [notes.id], user_input="我在医院当护士", agent_response="好的", user_id="李华"
    )
    engine.add_turn(
        alice, [notes.id], user_input="Я работаю врачом", agent_response="", user_id="oleg"
    )
    browser = login(alice_key)
    for tab in ("", "/messages", "/config"):
        page = browser.get(f"/memories/{notes.id}{tab}").text
        assert "embd_id: &#39;x@Builtin&#39; is the local all-MiniLM-L6-v2" in page, tab
        assert "Chinese or Japanese" in page and "Cyrillic" in page
    quiet = browser.get(f"/memories/{english.id}").text
    assert "reads English only" not in quiet
