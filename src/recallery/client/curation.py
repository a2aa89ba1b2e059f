"""The SDK's curation operations: bulk changes with a dry run, the review queue, the Facts
listing and entries over time (shapes from :mod:`recallery.wire.curation`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from recallery.client.call import Call, carried
from recallery.requests import (
    BulkResult,
    FactFilter,
    FactPage,
    MessageFilter,
    ReviewFilter,
    ReviewPage,
    Timeline,
    fact_filter_fields,
    review_filter_fields,
)
from recallery.requests.either import fact_filter, review_filter
from recallery.wire import curation


def bulk(
    memory_id: str,
    action: str,
    *,
    message_ids: Sequence[int] | None = None,
    filter: MessageFilter | None = None,
    dry_run: bool = True,
    reason: str = "",
    token: str | None = None,
) -> Call[BulkResult]:
    """Disable, enable, forget, restore, confirm, reject or erase the entries ``message_ids``
    names, or every raw turn ``filter`` selects; a dry run (the default) says what applying
    would change. Apply with the dry run's ``token`` to change exactly that, or nothing (a
    :class:`~recallery.errors.Conflict` when the selection changed since)."""
    body: dict[str, object] = {"action": action, "dry_run": dry_run, "reason": reason}
    if token is not None:
        body["token"] = token
    if message_ids is not None:
        body["message_ids"] = list(message_ids)
    if filter is not None:
        body["filter"] = curation.message_filter_dict(filter)
    path = f"/memories/{memory_id}/bulk"
    return Call("POST", path, curation.bulk_result_from_dict, json=body)


def review_queue(
    memory_id: str,
    where: ReviewFilter | None = None,
    *,
    user_id: str | None = None,
    types: str | Iterable[str] | None = None,
    page: int = 1,
    page_size: int = 30,
) -> Call[ReviewPage]:
    """Extracted entries nobody has reviewed, oldest first, each with its source turn. Each
    filter is a field of :class:`recallery.ReviewFilter` (by its SDK keyword), which says
    what it selects; None filters nothing. A :class:`~recallery.ReviewFilter` as ``where``
    says it all (then give no filter keyword)."""
    given = locals()
    args = {spec.metadata["arg"]: given[spec.metadata["arg"]] for spec in review_filter_fields()}
    chosen = review_filter(where, args)
    params: dict[str, object] = {"page": page, "page_size": page_size}
    for spec in review_filter_fields():
        params[spec.metadata["wire"]] = carried(getattr(chosen, spec.name), joined=True)
    path = f"/memories/{memory_id}/review"
    return Call("GET", path, curation.review_page_from_dict, params=params)


def facts(
    memory_id: str,
    where: FactFilter | None = None,
    *,
    types: str | Iterable[str] | None = None,
    trust: str | Iterable[str] | None = None,
    status: bool | None = None,
    forgotten: bool | None = None,
    user_id: str | None = None,
    text: str | None = None,
    page: int = 1,
    page_size: int = 50,
) -> Call[FactPage]:
    """The memory's current facts, newest first by valid time, with what became of the facts
    the filters select. Each filter is a field of :class:`recallery.FactFilter` (by its SDK
    keyword), which says what it selects; None filters nothing. A
    :class:`~recallery.FactFilter` as ``where`` says it all (then give no filter keyword)."""
    given = locals()
    args = {spec.metadata["arg"]: given[spec.metadata["arg"]] for spec in fact_filter_fields()}
    chosen = fact_filter(where, args)
    params: dict[str, object] = {"page": page, "page_size": page_size}
    for spec in fact_filter_fields():
        params[spec.metadata["wire"]] = carried(getattr(chosen, spec.name), joined=True)
    path = f"/memories/{memory_id}/facts"
    return Call("GET", path, curation.fact_page_from_dict, params=params)


def timeline(
    memory_id: str, *, bucket: str = "day", buckets: int = 30, clock: str = "recorded"
) -> Call[Timeline]:
    """Entries the memory holds per type, by the ``bucket`` (hour, day, week) in which they
    were recorded (``clock="recorded"``) or became valid (``"valid"``)."""
    params = {"bucket": bucket, "buckets": buckets, "clock": clock}
    path = f"/memories/{memory_id}/timeline"
    return Call("GET", path, curation.timeline_from_dict, params=params)
