"""Every extraction reply is validated; each kind of bad reply has its own outcome."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from recallery.extraction.extractor import Candidate, normalise_time, parse_reply, strip_fence
from recallery.models import EntryType, Outcome

S, E, P = EntryType.SEMANTIC, EntryType.EPISODIC, EntryType.PROCEDURAL
WHEN = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def parse(reply: object, enabled: tuple[EntryType, ...] = (S, E, P), cap: int = 5):
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return parse_reply(text, enabled, max_items=cap, conversation_time=WHEN)


def item(content: str, valid_at: object = None, invalid_at: object = None) -> dict[str, object]:
    return {"content": content, "valid_at": valid_at, "invalid_at": invalid_at}


def test_a_good_reply_gives_typed_candidates_with_normalised_times() -> None:
    parsed = parse(
        {
            "semantic": [item("The user lives in Berlin", "2025-01-01T00:00:00Z")],
            "episodic": [item("The user ran a half marathon", "2026-03-01 07:30:00")],
            "procedural": [item("Answer in Portuguese", None)],
        }
    )
    assert parsed.outcome is None
    assert parsed.candidates == (
        Candidate(S, "The user lives in Berlin", datetime(2025, 1, 1, tzinfo=UTC)),
        Candidate(E, "The user ran a half marathon", datetime(2026, 3, 1, 7, 30, tzinfo=UTC)),
        Candidate(P, "Answer in Portuguese", WHEN),
    )


def test_a_fenced_reply_is_read() -> None:
    parsed = parse('```json\n{"semantic": [{"content": "x y", "valid_at": null}]}\n```')
    assert [c.content for c in parsed.candidates] == ["x y"]
    assert strip_fence("```\n{}\n```") == "{}"


def test_text_that_is_not_json_is_unparseable() -> None:
    for text in ("Sure! The user lives in Berlin.", '{"semantic": [', ""):
        parsed = parse(text)
        assert parsed.outcome is Outcome.UNPARSEABLE, text
        assert parsed.candidates == ()
        assert "not JSON" in parsed.problems[0]


def test_json_that_is_not_an_object_is_invalid() -> None:
    parsed = parse([item("The user lives in Berlin")])
    assert parsed.outcome is Outcome.INVALID
    assert parsed.problems == ("reply is a array, not an object",)


def test_an_unknown_type_is_invalid_and_nothing_is_kept() -> None:
    parsed = parse({"semantic": [item("kept?")], "opinions": [item("x")]})
    assert parsed.outcome is Outcome.INVALID
    assert parsed.candidates == ()
    assert parsed.problems == ("type 'opinions' is not a memory type",)


def test_a_type_the_memory_did_not_enable_is_invalid() -> None:
    parsed = parse({"semantic": [item("a")], "procedural": [item("b")]}, enabled=(S,))
    assert parsed.outcome is Outcome.INVALID
    assert parsed.problems == ("type 'procedural' is not enabled for this memory",)


def test_raw_is_never_an_extractable_type() -> None:
    parsed = parse({"raw": [item("a")]}, enabled=(EntryType.RAW, S))
    assert parsed.outcome is Outcome.INVALID


def test_more_items_than_the_cap_is_invalid() -> None:
    parsed = parse({"semantic": [item(f"fact {i}") for i in range(6)]}, cap=5)
    assert parsed.outcome is Outcome.INVALID
    assert parsed.problems == ("semantic has 6 items, more than the cap of 5",)
    assert parse({"semantic": [item(f"fact {i}") for i in range(5)]}, cap=5).outcome is None


def test_items_of_the_wrong_shape_are_invalid() -> None:
    assert parse({"semantic": "The user lives in Berlin"}).outcome is Outcome.INVALID
    assert parse({"semantic": ["The user lives in Berlin"]}).outcome is Outcome.INVALID
    assert parse({"semantic": [{"content": 42}]}).outcome is Outcome.INVALID


def test_empty_content_is_dropped_and_nothing_left_is_empty() -> None:
    parsed = parse({"semantic": [item(""), item("   ")], "episodic": []})
    assert parsed.outcome is Outcome.EMPTY
    assert parsed.candidates == ()
    assert parse({}).outcome is Outcome.EMPTY
    mixed = parse({"semantic": [item(""), item("kept")]})
    assert [c.content for c in mixed.candidates] == ["kept"]
    assert "semantic[0]: empty content dropped" in mixed.notes


def test_unparsable_times_fall_back() -> None:
    parsed = parse({"semantic": [item("a", "last spring", "someday")]})
    (c,) = parsed.candidates
    assert c.valid_at == WHEN
    assert c.invalid_at is None
    assert len(parsed.notes) == 2


def test_an_end_before_the_start_is_dropped() -> None:
    (c,) = parse({"semantic": [item("a", "2026-03-01", "2026-02-01")]}).candidates
    assert c.invalid_at is None
    (d,) = parse({"semantic": [item("a", "2026-01-01", "2026-02-01")]}).candidates
    assert d.invalid_at == datetime(2026, 2, 1, tzinfo=UTC)


def test_repeats_within_one_reply_are_dropped() -> None:
    parsed = parse(
        {"semantic": [item("The user lives in Berlin."), item("the user lives in berlin")]}
    )
    assert len(parsed.candidates) == 1


def test_normalise_time() -> None:
    assert normalise_time("2026-03-02T10:00:00+01:00") == datetime(2026, 3, 2, 9, tzinfo=UTC)
    assert normalise_time("2026-03-02") == datetime(2026, 3, 2, tzinfo=UTC)
    assert normalise_time("yesterday") is None
    assert normalise_time(20260302) is None
    assert normalise_time(None) is None
