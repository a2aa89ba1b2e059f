"""Supersession made visible (issue 40 item 5): a replaced fact stays under its turn on the
Messages page, linked to what replaced it and to reinstating it; the job log's "entry N"
is a link; a turn with nothing replaced shows no such section."""

from __future__ import annotations

import numpy as np
from tests.support.web import Login

from recallery import Engine, Memory, Principal
from recallery.models import EntryType, NewEntry, Origin, Scope
from recallery.web.render import entry_links


def _fact(engine: Engine, memory: Memory, source: int, text: str) -> int:
    with engine.store.write() as w:
        raw = w.entry(Scope.of(memory.id), source)
        assert raw is not None
        fact = NewEntry(
            memory_id=memory.id,
            tenant_id=memory.tenant_id,
            message_type=EntryType.SEMANTIC,
            content=text,
            valid_at=raw.valid_at,
            size_bytes=100,
            source_id=source,
            origin=Origin.EXTRACTION,
        )
        (i,) = w.insert_entries([fact], np.ones((1, 64), dtype=np.float32), engine.clock.now())
    return i


def test_replaced_facts_stay_under_their_turn_with_links(
    login: Login, alice_key: str, engine: Engine, alice: Principal, notes: Memory
) -> None:
    (raw,) = engine.add_turn(alice, [notes.id], user_input="I moved", agent_response="ok")
    (quiet,) = engine.add_turn(alice, [notes.id], user_input="hello", agent_response="hi")
    old = _fact(engine, notes, raw.message_id, "the user lives in Lisbon")
    new = _fact(engine, notes, raw.message_id, "the user lives in Porto")
    with engine.store.write() as w:  # what extraction's supersede writes, and its log line
        w.update_entries([old], {"retired_at": engine.clock.now(), "superseded_by": new})
        (job,) = w.jobs_for_messages([raw.message_id]).values()
        w.update_job(job.id, {"progress_msg": f"judged to supersede entry {old}"})

    html = login(alice_key).get(f"/memories/{notes.id}/messages").text

    turn = html.split(f'id="turn-{raw.message_id}"')[1].split("</tbody>\n</tbody>")[0]
    replaced = turn.split('class="replaced"')[1]
    assert "1 replaced or merged" in turn and "the user lives in Lisbon" in replaced
    assert f'<a href="/memories/{notes.id}/entries/{new}">message {new}</a>' in replaced
    assert f'/entries/{old}#reinstate"' in replaced
    assert f'supersede entry <a href="/memories/{notes.id}/entries/{old}">{old}</a>' in turn
    other = html.split(f'id="turn-{quiet.message_id}"')[1].split('id="turn-')[0]
    assert "replaced or merged" not in other


def test_entry_links_escape_the_log_and_link_only_entry_numbers() -> None:
    shown = entry_links("<b>judged</b> to supersede entry 36; 3 added", "m1")
    assert shown == (
        '&lt;b&gt;judged&lt;/b&gt; to supersede entry <a href="/memories/m1/entries/36">36</a>;'
        " 3 added"
    )
