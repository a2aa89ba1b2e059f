"""LangGraph's search filters and namespace conditions, as pure functions over plain data
(the semantics of ``langgraph.store.base.SearchOp.filter`` and ``MatchCondition``)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Namespace = tuple[str, ...]

_ORDER: Mapping[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def matches(value: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes a filter: each field equal to the filter's value (a
    nested mapping or a list compared field by field), or meeting its operators (``$eq``,
    ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``). A dotted field (``"user.access-level"``)
    names a nested value, as in LangGraph's SQLite and PostgreSQL stores."""
    return not wanted or all(_compare(_field(value, k), w) for k, w in wanted.items())


def _field(value: Mapping[str, Any], path: str) -> Any:
    """The value at ``path``: the field itself, else the nested one its dots name."""
    if path in value or "." not in path:
        return value.get(path)
    here: Any = value
    for label in path.split("."):
        if not isinstance(here, Mapping) or label not in here:
            return None
        here = here[label]
    return here


def _compare(have: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(have, op, arg) for op, arg in wanted.items())
        return isinstance(have, Mapping) and all(
            _compare(have.get(k), w) for k, w in wanted.items()
        )
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(have, (list, tuple))
            and len(have) == len(wanted)
            and all(_compare(h, w) for h, w in zip(have, wanted, strict=True))
        )
    return bool(have == wanted)


def _operator(have: Any, op: str, arg: Any) -> bool:
    """One operator; an order between a number and anything but a number (or text and
    anything but text) does not hold."""
    if op == "$eq":
        return bool(have == arg)
    if op == "$ne":
        return bool(have != arg)
    compare = _ORDER.get(op)
    if compare is None:
        raise ValueError(f"Unsupported operator: {op}")
    if (_number(have) and _number(arg)) or (isinstance(have, str) and isinstance(arg, str)):
        return compare(have, arg)
    return False


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def namespace_matches(match_type: str, path: Sequence[str], namespace: Namespace) -> bool:
    """Whether ``namespace`` starts (``prefix``) or ends (``suffix``) with ``path``, where
    ``"*"`` stands for any one label."""
    if match_type not in ("prefix", "suffix"):
        raise ValueError(f"Unsupported match type: {match_type}")
    if len(namespace) < len(path):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    else:
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    return all(p == "*" or n == p for n, p in pairs)


def literal_prefix(path: Sequence[str]) -> Namespace:
    """The labels of a prefix condition before its first wildcard."""
    out: list[str] = []
    for label in path:
        if label == "*":
            break
        out.append(label)
    return tuple(out)


__all__ = ["Namespace", "literal_prefix", "matches", "namespace_matches"]
