"""The SDK's data subjects: forget or erase everything about one end user across the memories
the key may change (a dry run by default), and the listing of the end users, agents or
sessions of the memories the key may read, with their counts and last activity (shapes from
:mod:`recallery.wire.subjects`). ``people`` is the listing's old name, kept one release."""

from __future__ import annotations

import warnings

from recallery.client.call import Call, segment
from recallery.models import Page
from recallery.requests.subjects import Person, SubjectReceipt
from recallery.wire.subjects import subject_receipt_from_dict, subjects_page_from_dict


def _request(
    action: str, user_id: str, dry_run: bool, reason: str, token: str | None, everywhere: bool
) -> Call[SubjectReceipt]:
    path = f"/subjects/{segment(user_id)}/{action}"
    body: dict[str, object] = {"dry_run": dry_run, "reason": reason}
    if token is not None:
        body["token"] = token
    if everywhere:
        body["everywhere"] = True
    return Call("POST", path, subject_receipt_from_dict, json=body)


def forget_subject(
    user_id: str,
    *,
    dry_run: bool = True,
    reason: str = "",
    token: str | None = None,
    everywhere: bool = False,
) -> Call[SubjectReceipt]:
    """Forget every entry of ``user_id`` (their turns, what was extracted from them, their
    older versions) in each memory the key may read and write; a dry run (the default) lists
    them, each with its user and why. ``token``: the dry run's, to change exactly what it
    listed or nothing (409). ``everywhere``: an administrator's request over every tenant."""
    return _request("forget", user_id, dry_run, reason, token, everywhere)


def erase_subject(
    user_id: str,
    *,
    dry_run: bool = True,
    reason: str = "",
    token: str | None = None,
    everywhere: bool = False,
) -> Call[SubjectReceipt]:
    """Erase every entry of ``user_id`` with their versions and extracts in each memory the
    key may read and erase; a dry run (the default) lists them. Applying cannot be undone.
    ``token`` and ``everywhere`` as for :func:`forget_subject`."""
    return _request("erase", user_id, dry_run, reason, token, everywhere)


def list_subjects(
    kind: str = "user", *, keywords: str | None = None, page: int = 1, page_size: int = 30
) -> Call[Page[Person]]:
    """The users (``kind="user"``), agents or sessions of the memories the key may read,
    newest activity first; only ids containing ``keywords`` (any case) when given."""
    params = {"kind": kind, "keywords": keywords, "page": page, "page_size": page_size}
    return Call("GET", "/subjects", subjects_page_from_dict, params=params)


def people(
    kind: str = "user", *, keywords: str | None = None, page: int = 1, page_size: int = 30
) -> Call[Page[Person]]:
    """Deprecated: :func:`list_subjects`' old name, kept one release; it warns."""
    warnings.warn("people is deprecated: use list_subjects", DeprecationWarning, stacklevel=3)
    return list_subjects(kind, keywords=keywords, page=page, page_size=page_size)
