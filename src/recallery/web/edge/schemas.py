"""JSON Schema of what the API accepts, for request bodies and query parameters alike.

Values are still read as sent (RAGFlow's leniency) and checked by the engine; these schemas
tell clients, and the contract tests, exactly which values are accepted. Where RAGFlow falls
back instead of refusing (``page``, ``page_size``, ``limit``, ``top_n``), the schema is as
wide as the fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from recallery import validation as v
from recallery.models import EntryType, Fusion, JobState, Origin, Trust
from recallery.requests import DEFAULT_FUSION

Schema = dict[str, Any]

#: Text without NUL characters, which no field accepts.
TEXT: Schema = {"type": "string", "pattern": "^[^\\x00]*$"}
#: Text with something besides whitespace (and no NUL).
NON_BLANK: Schema = {"type": "string", "pattern": "^[^\\x00]*[^\\x00\\s][^\\x00]*$"}
#: A memory name: 1 to 128 characters once trimmed.
NAME: Schema = {"type": "string", "pattern": "^\\s*\\S([\\s\\S]{0,126}\\S)?\\s*$"}
#: ``name@Provider``: something before the last ``@`` and something after it.
MODEL_ID: Schema = {"type": "string", "pattern": "^[\\s\\S]*\\S[\\s\\S]*@[^@]*[^@\\s][^@]*$"}
MEMORY_ID: Schema = {"type": "string", "pattern": "^[0-9a-f]{32}$"}
MEMORY_IDS: Schema = {"type": "array", "items": MEMORY_ID, "minItems": 1, "maxItems": v.MAX_IDS}
MESSAGE_ID: Schema = {"type": "integer", "minimum": 0, "maximum": v.MAX_MESSAGE_ID}
TIME: Schema = {"type": "string", "format": "date-time"}
#: Every fusion method, and the one a search uses when the caller names none ("" or absent).
FUSIONS = [f.value for f in Fusion]
FUSION: Schema = {"enum": ["", *FUSIONS], "default": DEFAULT_FUSION.value}
FUSION_DOC = (
    f"How the keyword and vector legs are fused: {', '.join(FUSIONS)} "
    f"(default {DEFAULT_FUSION.value})."
)
UNIT: Schema = {"type": "number", "minimum": 0, "maximum": 1}
BOOLEAN: Schema = {"type": "boolean"}
ENTRY_TYPE: Schema = {"enum": [t.value for t in EntryType]}
ENTRY_TYPES: Schema = {"type": "array", "items": ENTRY_TYPE}
#: A dry run's token (a bulk change's, a data-subject request's).
TOKEN: Schema = {"type": "string", "pattern": "^[0-9a-f]{32}$"}
#: An extracted type (a fact, an event, an instruction): what review takes; a raw turn is not.
FACT_TYPE: Schema = {"enum": [t.value for t in EntryType.extracted()]}
TRUST: Schema = {"enum": [t.value for t in Trust]}
SEARCHABLE_TRUST: Schema = {"enum": [t.value for t in Trust if t is not Trust.REJECTED]}
ORIGIN: Schema = {"enum": [o.value for o in Origin]}
JOB_STATE: Schema = {"enum": ["", *(s.value for s in JobState)]}
#: A lenient page size, ``limit`` or ``top_n`` (RAGFlow's): any text; what is not a number or
#: below 1 falls back to 30; only a number above 100 is refused.
LENIENT_SIZE: Schema = {
    "type": "string",
    "not": {"pattern": "^\\s*\\+?0*(10[1-9]|1[1-9][0-9]|[2-9][0-9]{2}|[1-9][0-9]{3,})\\s*$"},
}
#: A lenient page: any text; what is not a number or below 1 means 1; past 10**9 is refused.
LENIENT_PAGE: Schema = {
    "type": "string",
    "not": {"pattern": "^\\s*\\+?0*[1-9][0-9]{9,}\\s*$"},
}
#: ``top_n`` in a body: anything but an integer above 100 (what is invalid falls back to 30).
LENIENT_TOP_N: Schema = {"not": {"type": "integer", "minimum": v.MAX_TOP_N + 1}}


def nullable(schema: Mapping[str, Any]) -> Schema:
    return {"anyOf": [dict(schema), {"type": "null"}]}


def listed(names: list[str]) -> Schema:
    """One of ``names``, or several of them comma-separated (empty parts are skipped)."""
    one = "|".join(names)
    return {"type": "string", "pattern": f"^({one})?(,({one})?)*$"}


def documented(schema: Mapping[str, Any]) -> Callable[[Schema], None]:
    """For ``json_schema_extra`` of a parameter read as text: documents it as ``schema``."""

    def replace(generated: Schema) -> None:
        generated.clear()
        generated.update(schema)

    return replace
