"""The MCP tools of the data-subject request path: forget or erase everything about one end
user across the memories the key may change, a dry run unless ``apply`` is true. They are named
as the engine and the SDK name them (``forget_subject``, ``erase_subject``); the old names
``forget_user`` and ``erase_user`` stay one release, each described as deprecated."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from recallery.requests.subjects import SubjectReceipt

from .calls import call

User = Annotated[str, Field(description="The end user's id, exactly as stored on entries.")]
Apply = Annotated[
    bool, Field(description="Make the change; false (the default) only counts what would change.")
]
Why = Annotated[str, Field(description="Why, for the audit log.")]
Token = Annotated[
    str | None,
    Field(
        description="With apply: the dry run's token, to change exactly what it listed "
        "(or nothing, when what is held about the user changed since)."
    ),
]


class Item(BaseModel):
    message_id: int
    user_id: str
    why: str = Field(description="own turn, own entry, derived or older version.")
    origin: int = Field(description="The entry it goes with (itself for their own).")


class MemoryPart(BaseModel):
    memory_id: str
    name: str
    entries: list[int] = Field(description="The user's own entries changed here.")
    cascade: list[int] = Field(description="Entries that go with them without their id.")
    items: list[Item] = Field(description="Every entry changed, with its user and why.")


class LeftAlone(BaseModel):
    memory_id: str
    name: str
    held: int = Field(description="Entries of the user this memory holds.")
    reason: str = Field(description="Why the key may not change it.")


class SubjectResult(BaseModel):
    action: str
    user_id: str
    dry_run: bool
    count: int = Field(description="Entries changed (or that would be), cascade included.")
    token: str = Field(description="Apply with this token to change exactly this list.")
    memories: list[MemoryPart]
    refused: list[LeftAlone] = Field(description="Memories holding the user, left untouched.")

    @classmethod
    def of(cls, r: SubjectReceipt) -> SubjectResult:
        return cls(
            action=r.action.value,
            user_id=r.user_id,
            dry_run=r.dry_run,
            count=r.count,
            token=r.token,
            memories=[
                MemoryPart(
                    memory_id=m.memory_id,
                    name=m.name,
                    entries=list(m.entries),
                    cascade=list(m.cascade),
                    items=[
                        Item(message_id=c.message_id, user_id=c.user_id, why=c.why, origin=c.origin)
                        for c in m.items
                    ],
                )
                for m in r.memories
            ],
            refused=[
                LeftAlone(memory_id=m.memory_id, name=m.name, held=m.held, reason=m.reason)
                for m in r.refused
            ],
        )


async def forget_subject(
    user_id: User, apply: Apply = False, reason: Why = "", token: Token = None
) -> SubjectResult:
    return await call(
        lambda b: SubjectResult.of(
            b.forget_subject(user_id, dry_run=not apply, reason=reason, token=token)
        )
    )


async def erase_subject(
    user_id: User, apply: Apply = False, reason: Why = "", token: Token = None
) -> SubjectResult:
    return await call(
        lambda b: SubjectResult.of(
            b.erase_subject(user_id, dry_run=not apply, reason=reason, token=token)
        )
    )


async def forget_user(
    user_id: User, apply: Apply = False, reason: Why = "", token: Token = None
) -> SubjectResult:
    """Deprecated: :func:`forget_subject`'s old tool name, kept one release."""
    return await forget_subject(user_id, apply, reason, token)


async def erase_user(
    user_id: User, apply: Apply = False, reason: Why = "", token: Token = None
) -> SubjectResult:
    """Deprecated: :func:`erase_subject`'s old tool name, kept one release."""
    return await erase_subject(user_id, apply, reason, token)


#: The old tool names, kept one release: each is the tool named beside it.
RENAMED = {"forget_user": "forget_subject", "erase_user": "erase_subject"}

__all__ = [
    "RENAMED",
    "SubjectResult",
    "erase_subject",
    "erase_user",
    "forget_subject",
    "forget_user",
]
