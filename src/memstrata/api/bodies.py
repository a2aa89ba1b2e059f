"""Request bodies. Fields are documented with their types but accepted as sent: the engine
checks them and answers with RAGFlow's messages, which name the field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memstrata.errors import InvalidInput
from memstrata.requests import (
    DEFAULT_KEYWORD_WEIGHT,
    DEFAULT_MAX_TOKENS,
    DEFAULT_SIMILARITY_THRESHOLD,
    DEFAULT_TOP_N,
)

_STRING: dict[str, Any] = {"type": "string"}
_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_IDS: dict[str, Any] = {"anyOf": [_STRING, _STRINGS]}
_BOOL: dict[str, Any] = {"type": "boolean"}
_NUMBER: dict[str, Any] = {"type": "number"}
_INTEGER: dict[str, Any] = {"type": "integer"}
_TIME: dict[str, Any] = {"type": "string", "format": "date-time"}


def _field(schema: dict[str, Any], description: str) -> Any:
    return Field(None, description=description, json_schema_extra=schema)


class Lenient(BaseModel):
    """A lenient body: only the keys that were sent count."""

    model_config = ConfigDict(extra="allow")

    def sent(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)

    def require(self, *names: str) -> None:
        """RAGFlow's check that every named key is present."""
        missing = [n for n in names if n not in self.model_fields_set]
        if missing:
            raise InvalidInput(missing[0], f"required argument are missing: {','.join(missing)}; ")


class MemoryFields(Lenient):
    name: Any = _field(_STRING, "Trimmed, 1 to 128 characters; de-duplicated per owner.")
    memory_type: Any = _field(
        {**_STRINGS, "items": {"enum": ["raw", "semantic", "episodic", "procedural"]}},
        "Entry types to keep; raw turns are always stored.",
    )
    embd_id: Any = _field(_STRING, "Embedding model id, `name@Provider` (`@Builtin` is local).")
    llm_id: Any = _field(_STRING, "Chat model id for extraction, `name@Provider`.")
    permissions: Any = _field({"enum": ["me", "team"]}, "`me` (owner only) or `team`.")
    memory_size: Any = _field(_INTEGER, "Byte budget, in (0, 10485760].")
    forgetting_policy: Any = _field({"enum": ["FIFO", "LRU"]}, "What is evicted when full.")
    temperature: Any = _field(_NUMBER, "Extraction temperature in [0, 1].")
    avatar: Any = _field(_STRING, "Base64 data URL.")
    description: Any = _field(_STRING, "Free text.")
    system_prompt: Any = _field(_STRING, "Extraction system prompt.")
    user_prompt: Any = _field(_STRING, "Extraction user prompt template.")


class AddMessage(Lenient):
    memory_id: Any = _field(_IDS, "Memories to write the turn to (at most 100).")
    agent_id: Any = _field(_STRING, "The agent that produced the turn.")
    session_id: Any = _field(_STRING, "The conversation.")
    user_input: Any = _field(_STRING, "What the user said.")
    agent_response: Any = _field(_STRING, "What the agent answered.")
    user_id: Any = _field(_STRING, "The end user; defaults to the caller.")
    conversation_time: Any = _field(_TIME, "When the turn happened (default: now).")


class SetStatus(Lenient):
    status: Any = _field(_BOOL, "Enabled (true) or disabled (false).")


class Correct(Lenient):
    content: Any = _field(_STRING, "The corrected text.")
    reason: Any = _field(_STRING, "Why, for the audit log.")
    valid_at: Any = _field(_TIME, "When the corrected fact became true (default: unchanged).")


class Review(Lenient):
    verdict: Any = _field({"enum": ["confirmed", "rejected"]}, "The reviewer's verdict.")
    reason: Any = _field(_STRING, "Why, for the audit log.")


class Reason(Lenient):
    reason: Any = _field(_STRING, "Why, for the audit log.")


class ContextQuery(Lenient):
    query: Any = _field(_STRING, "What to recall.")
    memory_id: Any = _field(_IDS, "Memories to search.")
    max_tokens: Any = _field(_INTEGER, f"Token budget of the block (default {DEFAULT_MAX_TOKENS}).")
    top_n: Any = _field(_INTEGER, f"Entries to consider (default {DEFAULT_TOP_N}, at most 100).")
    similarity_threshold: Any = _field(
        _NUMBER, f"Least fused score, default {DEFAULT_SIMILARITY_THRESHOLD}."
    )
    keywords_similarity_weight: Any = _field(
        _NUMBER, f"Weight of the keyword side, {DEFAULT_KEYWORD_WEIGHT}."
    )
    agent_id: Any = _field(_STRING, "Exact agent filter.")
    session_id: Any = _field(_STRING, "Exact session filter.")
    user_id: Any = _field(_STRING, "Exact user filter.")
    message_type: Any = _field(_IDS, "Entry types to include.")
    as_of: Any = _field(_TIME, "What the store knew at this time.")
    valid_on: Any = _field(_TIME, "What was true at this time.")
    fusion: Any = _field({"enum": ["weighted", "rrf"]}, "How the two legs are fused.")
    trust: Any = _field(
        {"anyOf": [_STRING, {"type": "array", "items": {"enum": ["unreviewed", "confirmed"]}}]},
        "Only entries in these trust states, a list or comma-separated: `unreviewed`, "
        "`confirmed` (default: both; rejected entries are never found).",
    )


class NewUser(Lenient):
    name: Any = _field(_STRING, "Unique user name.")
    is_admin: Any = _field(_BOOL, "Administrator (default false).")


class NewKey(Lenient):
    name: Any = _field(_STRING, "A label for the key.")
    scope: Any = _field(_STRINGS, "Memory ids the key is limited to (default: no limit).")


class NewMember(Lenient):
    user_id: Any = _field(_STRING, "The user who joins the team.")
