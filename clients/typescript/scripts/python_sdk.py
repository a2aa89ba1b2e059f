"""What the Python SDK sends, as JSON, for the TypeScript client's tests to compare with.

For every operation in ``recallery.client.OPERATIONS`` it builds the call with only the
required arguments and the positional ones whose default is None (placeholders named
``{memory_id}``... for the path's ids, ``"x"`` for texts, empty lists) and prints its method,
path, query parameters and body: the routes the SDK covers and the defaults it sends;
``import_memory`` also with ``memory_id=None`` (its second route). And for every error
envelope the tests try, the class the SDK raises.

    python clients/typescript/scripts/python_sdk.py > python-sdk.json
"""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any
from urllib.parse import unquote

import recallery.client as sdk
from recallery import wire
from recallery.client.call import Call, query
from recallery.client.shells import OPERATIONS

PATH_IDS = {"memory_id", "message_id", "user_id", "key_id", "tenant_id"}
KINDS = [
    "invalid_input",
    "unauthorized",
    "forbidden",
    "not_found",
    "conflict",
    "throttled",
    "capacity_exceeded",
    "model_error",
    "store_error",
    "error",
    "chat_error",
    "missing_extra",
    "nonsense",
    None,
]
CODES = [100, 101, 102, 401, 403, 404, 409, 429, 500, 999]
STATUSES = [400, 401, 404, 500]


def placeholder(param: inspect.Parameter) -> Any:
    """A value for a required argument: a path id names itself, the rest are neutral."""
    if param.name in PATH_IDS:
        return "{" + param.name + "}"
    if param.name == "memory_ids":
        return ["{memory_id}"]
    annotation = str(param.annotation)
    if param.name == "enabled":
        return True
    if "Mapping" in annotation and "Sequence" not in annotation:
        return {}
    if "Sequence" in annotation:
        return []
    return "x"


def _request_object(param: inspect.Parameter) -> bool:
    """A parameter that takes a whole request (a Messages, Facts, review or audit filter, a
    RequestQuery) in place of its fields: a caller of the SDK's keywords leaves it out."""
    kinds = ("MessageFilter", "FactFilter", "ReviewFilter", "AuditFilter", "RequestQuery")
    return any(kind in str(param.annotation) for kind in kinds)


def sent(call: Call[Any]) -> dict[str, Any]:
    """A call as the wire carries it: query values as texts, repeated where a list."""
    params: dict[str, list[str]] = {}
    for key, value in (query(call.params) or {}).items():
        values = value if isinstance(value, list) else [value]
        params[key] = [str(v).lower() if isinstance(v, bool) else str(v) for v in values]
    return {
        "method": call.method,
        "path": unquote(call.path),
        "query": params,
        "json": call.json,
        "content": call.content,
    }


def calls() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for name in OPERATIONS:
        op = getattr(sdk, name)
        args, kwargs = [], {}
        for param in inspect.signature(op).parameters.values():
            required = param.default is inspect.Parameter.empty
            if param.kind is param.KEYWORD_ONLY and required:
                kwargs[param.name] = placeholder(param)
            # a positional argument whose default is None is one a caller usually gives
            elif param.kind is param.POSITIONAL_OR_KEYWORD and (
                required or (param.default is None and not _request_object(param))
            ):
                args.append(placeholder(param))
        out[name] = [sent(op(*args, **kwargs))]
    out["import_memory"].append(sent(sdk.import_memory(None, "")))
    return out


def errors() -> list[dict[str, Any]]:
    """The class the SDK raises for each envelope (kind, code) answered with each status."""
    found = []
    for kind in KINDS:
        for code in CODES:
            for status in STATUSES:
                body = {
                    "code": code,
                    "message": "m",
                    "data": None if kind is None else {"error": kind},
                }
                error = wire.error_from_envelope(body, status)
                found.append(
                    {"kind": kind, "code": code, "status": status, "class": type(error).__name__}
                )
    return found


if __name__ == "__main__":
    json.dump({"operations": list(OPERATIONS), "calls": calls(), "errors": errors()}, sys.stdout)
