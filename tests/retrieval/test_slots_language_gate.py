"""Slots and stale marks read each turn by its own language's patterns (the language gate of
text/cues.py): a turn in Chinese, Russian or German that quotes or shares English words fills
the slots its own language says, never one an English pattern matched by accident, and is
never marked stale by shared English words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from recallery.models import Entry, EntryType, Hit
from recallery.retrieval.context import staleness
from recallery.text.slots import slots

T0 = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "own"),
    [
        (
            "我朋友跟我说过一句英文：I live in Berlin，可是我自己一直住在上海这个城市",
            {"home": "上海这个城市"},
        ),
        (
            "Мой коллега всегда говорит: I work as a nurse, но я работаю учителем в школе",
            {"work": "учител в школ"},
        ),
        (
            "Ich wohne in Wien und mein Kollege sagt immer: I live in Berlin, aber das ist "
            "nicht wahr",
            {"home": "wien"},
        ),
        ("Ελένη: I live in Berlin, αλλά μένω στην Αθήνα τώρα", {}),  # no Greek table
    ],
)
def test_a_turn_in_another_language_fills_its_own_slots_only(
    text: str, own: dict[str, str]
) -> None:
    """The English quote fills nothing: Berlin and the nurse are never a value."""
    assert slots(f"User Input: {text}") == own


def test_an_english_turn_still_fills_its_slots() -> None:
    assert slots("User Input: I live in Berlin and I work as a nurse") == {
        "home": "berlin and i work as a nurse",
        "work": "a nurse",
    }


def hit(i: int, text: str, day: int, user: str = "u1") -> Hit:
    e = Entry(
        message_id=i,
        memory_id="m" * 32,
        tenant_id="t",
        content=f"User Input: {text}\nAgent Response: noted",
        message_type=EntryType.RAW,
        valid_at=T0 + timedelta(days=day),
        recorded_at=T0,
        user_id=user,
    )
    return Hit(e, 1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("我昨天买了 iPhone Pro Max 手机", "我弟弟很喜欢 iPhone Pro Max 的相机"),
        ("Я купила iPhone Pro Max вчера", "Мой брат хвалит камеру iPhone Pro Max"),
    ],
)
def test_shared_english_words_in_another_script_mark_nothing_stale(older: str, newer: str) -> None:
    hits = [hit(1, older, 0), hit(2, newer, 5), hit(3, "I bake bread every weekend", 9, "u2")]
    assert staleness(hits) == {}


def test_english_statements_on_one_slot_are_still_marked() -> None:
    hits = [hit(1, "My favourite colour is red.", 0), hit(2, "My favourite colour is teal.", 5)]
    assert staleness(hits) == {1: 2}
