"""The SDK's data-subject requests: forget or erase everything about one end user across the
memories the key may change (a dry run by default; shapes from :mod:`recallery.subjects`)."""

from __future__ import annotations

from urllib.parse import quote

from recallery import subjects
from recallery.client.call import Call
from recallery.subjects import SubjectReceipt


def _request(action: str, user_id: str, dry_run: bool, reason: str) -> Call[SubjectReceipt]:
    path = f"/subjects/{quote(user_id, safe='')}/{action}"
    body = {"dry_run": dry_run, "reason": reason}
    return Call("POST", path, subjects.receipt_from_dict, json=body)


def forget_subject(user_id: str, *, dry_run: bool = True, reason: str = "") -> Call[SubjectReceipt]:
    """Forget every current entry of ``user_id`` (and what was extracted from their turns)
    in each memory the key may write; a dry run (the default) only counts."""
    return _request("forget", user_id, dry_run, reason)


def erase_subject(user_id: str, *, dry_run: bool = True, reason: str = "") -> Call[SubjectReceipt]:
    """Erase every entry of ``user_id`` with its versions and extracts in each memory the key
    may erase; a dry run (the default) only counts. Applying cannot be undone."""
    return _request("erase", user_id, dry_run, reason)
