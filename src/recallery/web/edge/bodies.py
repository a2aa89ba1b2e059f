"""Request bodies. Fields are documented with their types but accepted as sent: the engine
checks them and answers with RAGFlow's messages, which name the field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from recallery import validation as v
from recallery.errors import InvalidInput
from recallery.web.edge import schemas as S

#: Memory ids in a body: a list, or one string (maybe comma-separated).
IDS = {"anyOf": [S.MEMORY_IDS, {"type": "string", "pattern": "^[\\s,]*[0-9a-f]{32}[\\s,]*$"}]}
TYPES = S.nullable({"anyOf": [S.ENTRY_TYPES, S.listed(S.ENTRY_TYPE["enum"])]})
TRUST = S.nullable(
    {
        "anyOf": [
            {"type": "array", "items": S.SEARCHABLE_TRUST},
            S.listed(S.SEARCHABLE_TRUST["enum"]),
        ]
    }
)


#: ``openapi_extra`` of a route whose body must be sent: the schema says so (and that it is not
#: null), while the route reads it as optional to answer RAGFlow's message for what is missing.
REQUIRED_BODY: dict[str, Any] = {"requestBody": {"required": True}}


def field_of(schema: dict[str, Any], description: str) -> Any:
    return Field(None, description=description, json_schema_extra=schema)


def requires(*names: str) -> ConfigDict:
    """A body whose schema lists ``names`` as required (RAGFlow's check still names them)."""
    return ConfigDict(extra="allow", json_schema_extra={"required": list(names)})


def _valid_unicode(value: object) -> bool:
    """No lone surrogate anywhere in ``value`` (JSON's ``\\ud800`` escapes can send one)."""
    if isinstance(value, str):
        return value.isascii() or not any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, list):
        return all(_valid_unicode(item) for item in value)
    if isinstance(value, dict):
        return all(_valid_unicode(k) and _valid_unicode(item) for k, item in value.items())
    return True


def _json_number(value: object) -> object:
    """JSON has one kind of number: ``5.0`` is the integer 5 (as JSON Schema says), in lists
    and objects too."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_json_number(item) for item in value]
    if isinstance(value, dict):
        return {k: _json_number(item) for k, item in value.items()}
    return value


class Lenient(BaseModel):
    """A lenient body: only the keys that were sent count. Text must be valid Unicode, which
    is checked here for every field, before any of it reaches the engine; integral numbers
    arrive as integers."""

    model_config = ConfigDict(extra="allow")

    @field_validator("*", mode="before")
    @classmethod
    def _unicode(cls, value: Any) -> Any:
        if not _valid_unicode(value):
            raise PydanticCustomError("unicode", "not valid Unicode (a lone surrogate)")
        return _json_number(value)

    def sent(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)

    def require(self, *names: str) -> None:
        """RAGFlow's check that every named key is present."""
        missing = [n for n in names if n not in self.model_fields_set]
        if missing:
            raise InvalidInput(missing[0], f"required argument are missing: {','.join(missing)}; ")


class MemoryFields(Lenient):
    """The fields of a memory; any of them on update. Unknown fields are refused."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": False})

    name: Any = field_of(S.NAME, "Trimmed, 1 to 128 characters; de-duplicated per owner.")
    memory_type: Any = field_of(S.ENTRY_TYPES, "Entry types to keep; raw turns are always stored.")
    embd_id: Any = field_of(
        S.MODEL_ID,
        "Embedding model id, `name@Provider`: `@Builtin` (local) or a configured provider.",
    )
    llm_id: Any = field_of(S.NON_BLANK, "Chat model id for extraction, `name@Provider`.")
    permissions: Any = field_of({"enum": ["me", "team"]}, "`me` (owner only) or `team`.")
    memory_size: Any = field_of(
        {"type": "integer", "minimum": 1, "maximum": v.MEMORY_SIZE_LIMIT},
        "Byte budget, in (0, 10485760]; on update not below the bytes held (see `evict`).",
    )
    forgetting_policy: Any = field_of({"enum": ["FIFO", "LRU"]}, "What is evicted when full.")
    temperature: Any = field_of(S.UNIT, "Extraction temperature in [0, 1], a JSON number.")
    avatar: Any = field_of(S.nullable(S.TEXT), "Base64 data URL.")
    description: Any = field_of(S.nullable(S.TEXT), "Free text.")
    system_prompt: Any = field_of(S.nullable(S.TEXT), "Extraction system prompt.")
    user_prompt: Any = field_of(S.nullable(S.TEXT), "Extraction user prompt template.")
    tenant_llm_id: Any = field_of({}, "Sent by RAGFlow's clients; ignored.")
    tenant_embd_id: Any = field_of({}, "Sent by RAGFlow's clients; ignored.")


class NewMemory(MemoryFields):
    """A new memory: RAGFlow's four required fields, and any of the others."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "additionalProperties": False,
            "required": ["name", "memory_type", "embd_id", "llm_id"],
        },
    )


_BLANK: dict[str, Any] = {"type": "string", "pattern": "^\\s*$"}


class AddMessage(Lenient):
    """A turn; the input and the response may not both be blank."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "required": ["memory_id", "agent_id", "session_id", "user_input", "agent_response"],
            "not": {
                "properties": {"user_input": _BLANK, "agent_response": _BLANK},
                "required": ["user_input", "agent_response"],
            },
        },
    )

    memory_id: Any = field_of(IDS, "Memories to write the turn to (at most 100).")
    agent_id: Any = field_of(S.nullable(S.TEXT), "The agent that produced the turn.")
    session_id: Any = field_of(S.nullable(S.TEXT), "The conversation.")
    user_input: Any = field_of(S.TEXT, "What the user said.")
    agent_response: Any = field_of(S.TEXT, "What the agent answered.")
    user_id: Any = field_of(S.nullable(S.TEXT), "The end user; defaults to the caller.")
    conversation_time: Any = field_of(S.nullable(S.TIME), "When the turn happened (default: now).")


class SetStatus(Lenient):
    model_config = requires("status")

    status: Any = field_of(S.BOOLEAN, "Enabled (true) or disabled (false).")


class Correct(Lenient):
    model_config = requires("content")

    content: Any = field_of(S.NON_BLANK, "The corrected text.")
    reason: Any = field_of(S.nullable(S.TEXT), "Why, for the audit log.")
    valid_at: Any = field_of(
        S.nullable(S.TIME), "When the corrected fact became true (default: unchanged)."
    )


class Review(Lenient):
    model_config = requires("verdict")

    verdict: Any = field_of({"enum": ["confirmed", "rejected"]}, "The reviewer's verdict.")
    reason: Any = field_of(S.nullable(S.TEXT), "Why, for the audit log.")


class Reason(Lenient):
    reason: Any = field_of(S.nullable(S.TEXT), "Why, for the audit log.")


class RequiredReason(Lenient):
    model_config = requires("reason")

    reason: Any = field_of(S.NON_BLANK, "Why, for the audit log (required).")


class NewUser(Lenient):
    model_config = requires("name")

    name: Any = field_of(S.NON_BLANK, "Unique user name.")
    is_admin: Any = field_of(S.nullable(S.BOOLEAN), "Administrator (default false).")


class NewKey(Lenient):
    name: Any = field_of(S.nullable(S.TEXT), "A label for the key.")
    scope: Any = field_of(
        S.nullable(S.MEMORY_IDS), "Memory ids the key is limited to (default: no limit)."
    )


class NewMember(Lenient):
    model_config = requires("user_id")

    user_id: Any = field_of(S.TEXT, "The user who joins the team.")
