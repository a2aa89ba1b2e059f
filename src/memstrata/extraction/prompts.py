"""The extraction prompt: versioned code, one instruction block per enabled type."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import permutations

from memstrata.models import EntryType

PROMPT_VERSION = "extract-2026-11-30.1"

ROLE = (
    "You are a memory extraction specialist. You turn one conversation turn between a user "
    "and an AI agent into structured, typed memory entries."
)

INSTRUCTIONS = {
    EntryType.SEMANTIC: (
        "## semantic\n"
        "Extract general or lasting knowledge: facts, preferences, definitions and "
        "relationships that stay true beyond this conversation (for example where someone "
        "lives or works, what they like).\n"
        "- valid_at: when the fact became true; the conversation time if it has no date.\n"
        "- invalid_at: when it stopped being true, or null if it still holds."
    ),
    EntryType.EPISODIC: (
        "## episodic\n"
        "Extract concrete experiences and events tied to a time, a person and a context.\n"
        "- valid_at: when the event started or happened. Resolve relative times ('last "
        "Monday', 'yesterday', 'at 3 PM') against the conversation time.\n"
        "- invalid_at: when it ended, or null for a single moment."
    ),
    EntryType.PROCEDURAL: (
        "## procedural\n"
        "Extract processes, methods and step-by-step instructions: how the user wants things "
        "done, goal-oriented and often conditional.\n"
        "- valid_at: when the procedure took effect; invalid_at: when it became obsolete, or "
        "null if current."
    ),
}


def requirements(types: Iterable[EntryType], max_items: int) -> str:
    names = ", ".join(t.value for t in types)
    return (
        "## Output requirements\n"
        "1. Output valid JSON only.\n"
        "2. Follow the required output format exactly.\n"
        "3. Every item has content, valid_at and invalid_at.\n"
        "4. Timestamps use ISO 8601 (YYYY-MM-DDTHH:MM:SS).\n"
        f"5. Extract only these types: {names}.\n"
        f"6. At most {max_items} items per type; fewer is fine, none is fine."
    )


def output_format(types: Iterable[EntryType]) -> str:
    keys = ",\n".join(
        f'  "{t.value}": [{{"content": "...", "valid_at": "ISO 8601", "invalid_at": null}}]'
        for t in types
    )
    return "## Required output format\n```json\n{\n" + keys + "\n}\n```"


def default_system_prompt(types: Iterable[EntryType], max_items: int = 5) -> str:
    """The default system prompt for the extracted ``types`` (raw is ignored), in fixed order."""
    chosen = [t for t in EntryType.extracted() if t in set(types)]
    if not chosen:
        return ""
    blocks = [ROLE, *(INSTRUCTIONS[t] for t in chosen), requirements(chosen, max_items)]
    blocks.append(output_format(chosen))
    return "\n\n".join(blocks)


def is_default_prompt(prompt: str | None, types: Iterable[EntryType], max_items: int = 5) -> bool:
    """Whether ``prompt`` is a generated default for ``types`` in any type order."""
    if not prompt:
        return True
    chosen = [t for t in EntryType.extracted() if t in set(types)]
    return any(prompt == _prompt_in_order(list(order), max_items) for order in permutations(chosen))


def _prompt_in_order(types: list[EntryType], max_items: int) -> str:
    blocks = [ROLE, *(INSTRUCTIONS[t] for t in types), requirements(types, max_items)]
    blocks.append(output_format(types))
    return "\n\n".join(blocks)
