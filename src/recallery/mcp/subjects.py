"""The MCP tools of the data-subject request path: forget or erase everything about one end
user across the memories the key may change, a dry run unless ``apply`` is true."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from recallery.subjects import SubjectAction, SubjectReceipt

from .calls import call

User = Annotated[str, Field(description="The end user's id, exactly as stored on entries.")]
Apply = Annotated[
    bool, Field(description="Make the change; false (the default) only counts what would change.")
]
Why = Annotated[str, Field(description="Why, for the audit log.")]


class MemoryPart(BaseModel):
    memory_id: str
    name: str
    entries: list[int] = Field(description="The user's own entries changed here.")
    cascade: list[int] = Field(description="Entries derived from them (extracts, versions).")


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
    memories: list[MemoryPart]
    refused: list[LeftAlone] = Field(description="Memories holding the user, left untouched.")

    @classmethod
    def of(cls, r: SubjectReceipt) -> SubjectResult:
        return cls(
            action=r.action.value,
            user_id=r.user_id,
            dry_run=r.dry_run,
            count=r.count,
            memories=[
                MemoryPart(
                    memory_id=m.memory_id,
                    name=m.name,
                    entries=list(m.entries),
                    cascade=list(m.cascade),
                )
                for m in r.memories
            ],
            refused=[
                LeftAlone(memory_id=m.memory_id, name=m.name, held=m.held, reason=m.reason)
                for m in r.refused
            ],
        )


async def forget_user(user_id: User, apply: Apply = False, reason: Why = "") -> SubjectResult:
    return await call(
        lambda b: SubjectResult.of(b.subject(SubjectAction.FORGET, user_id, not apply, reason))
    )


async def erase_user(user_id: User, apply: Apply = False, reason: Why = "") -> SubjectResult:
    return await call(
        lambda b: SubjectResult.of(b.subject(SubjectAction.ERASE, user_id, not apply, reason))
    )


__all__ = ["SubjectResult", "erase_user", "forget_user"]
