"""The SDK's People listing: the end users, agents or sessions of the memories the key may
read, with their counts and last activity (shapes from :mod:`recallery.wire.people`)."""

from __future__ import annotations

from recallery.client.call import Call
from recallery.models import Page
from recallery.requests.subjects import Person
from recallery.wire.people import people_page_from_dict


def people(
    kind: str = "user", *, keywords: str | None = None, page: int = 1, page_size: int = 30
) -> Call[Page[Person]]:
    """The users (``kind="user"``), agents or sessions of the memories the key may read,
    newest activity first; only ids containing ``keywords`` (any case) when given."""
    params = {"kind": kind, "keywords": keywords, "page": page, "page_size": page_size}
    return Call("GET", "/people", people_page_from_dict, params=params)
