"""People to browse: the end users, agents and sessions of the memories a caller may read,
each with its counts of facts and turns and its last activity, searched by a part of its id
and paged. A curator answering "what do we hold about this customer?" starts here, then
opens the person's page (:meth:`~recallery.services.subjects.SubjectService.subject_profile`).

What the caller may read decides who is listed: an id stored only in memories its key cannot
read (another owner's, a private one of a team mate, one outside a scoped key) is not shown,
and a key without the ``read`` capability sees nobody.
"""

from __future__ import annotations

from recallery import validation as v
from recallery.access import Action, decide
from recallery.errors import InvalidInput
from recallery.models import Page, Principal, Scope
from recallery.requests.subjects import Person, subject_kind
from recallery.services.memories import visible_memories
from recallery.store.base import Store
from recallery.store.reader import Reader

#: Most rows a page may ask for.
MAX_PAGE_SIZE = v.MAX_TOP_N


class PeopleService:
    """The People listing over one store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def people(
        self,
        actor: Principal,
        kind: object = "user",
        *,
        keywords: object = None,
        page: object = 1,
        page_size: object = 30,
    ) -> Page[Person]:
        """The users (``kind="user"``), agents or sessions of the memories ``actor`` may read,
        newest activity first: page ``page`` of ``page_size``, only ids containing
        ``keywords`` (any case) when given."""
        who = subject_kind(kind)
        text = "" if keywords is None else v.text(keywords, "keywords", limit=v.MAX_ID_TEXT)
        number = v.page(page)
        size = _page_size(page_size)
        with self.store.read() as r:
            scope = self._readable(r, actor)
            found, total = r.people(
                scope, who, text.strip(), limit=size, offset=(number - 1) * size
            )
        return Page(tuple(found), total)

    @staticmethod
    def _readable(r: Reader, actor: Principal) -> Scope:
        """The memories ``actor`` may read (its key's scope, its own and its teams')."""
        memories = visible_memories(r, actor, "kind")
        return Scope(frozenset(m.id for m in memories if decide(actor, Action.READ, m)))


def _page_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise InvalidInput("page_size", f"page_size must be between 1 and {MAX_PAGE_SIZE}")
    return value


__all__ = ["PeopleService"]
