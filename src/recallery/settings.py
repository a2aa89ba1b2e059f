"""One typed settings object, read once at the edge (CLI, server start) and passed down."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from recallery.errors import InvalidInput

PREFIX = "RECALLERY_"
#: Values of ``metrics``.
METRICS_ACCESS = ("admin", "open", "off")


@dataclass(frozen=True)
class ProviderConfig:
    """An OpenAI-compatible endpoint for a model provider name (``name@<provider>``)."""

    base_url: str
    api_key: str = ""
    #: Balanced search fusion: the keyword weight this provider's embedders get at a
    #: caller's weight of 0.5 (None: the default for remote embedders).
    keyword_balance: float | None = None


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("data")
    database_url: str | None = None
    #: Connections each process keeps to PostgreSQL (``database_url`` ``postgresql://...``).
    database_pool_size: int = 10
    host: str = "127.0.0.1"
    port: int = 9380
    admin_api_key: str | None = None
    providers: Mapping[str, ProviderConfig] = field(default_factory=dict)
    max_items_per_type: int = 5
    #: Search: how much a raw turn borrows from its conversation neighbours' scores (0.4:
    #: better than 0.5 on LoCoMo 1-5 sent as whole turns and as chat messages, and than 0.3
    #: on whole turns; benchmarks/README.md).
    neighbour_weight: float = 0.4
    #: Search: turns on each side that count as neighbours (0 turns neighbour context off).
    neighbour_span: int = 2
    #: Search: how much a raw turn's conversation window (it and the turns written before it
    #: in its conversation, as far back as ``store/windowing.py`` reaches) adds to its keyword
    #: score (0 turns it off; at most 1).
    context_weight: float = 1.0
    #: The local embedding model's intra-op threads (None: as many as there are cores, up to 2).
    embed_threads: int | None = None
    #: SQLite: vectors from which a memory also gets an approximate (HNSW) index; 0: never.
    ann_threshold: int = 20_000
    chat_timeout_s: float = 120.0
    job_max_attempts: int = 3
    job_lease_s: float = 600.0
    #: REST: the largest request body accepted (JSON routes); larger answers HTTP 413.
    max_body_bytes: int = 1024 * 1024
    #: REST: the largest import body (``POST /memories/import``, ``/memories/{id}/import``).
    max_import_bytes: int = 64 * 1024 * 1024

    #: SQLite: the erasure ledger's file (None: ``erasures.jsonl`` in ``data_dir``); keep it
    #: on other storage than the backups (docs/deployment.md, Backup and restore).
    erasure_ledger: Path | None = None
    #: Who may read ``/metrics``: ``admin`` (an admin key), ``open`` (anyone) or ``off``.
    metrics: str = "admin"
    #: The request log (who read what): every REST, web and MCP call, kept in the store.
    request_log: bool = True
    #: Whether the request log keeps a search's query text (personal data: off by default).
    request_log_queries: bool = False
    #: The request log keeps requests this many days, and at most this many requests.
    request_log_days: float = 30.0
    request_log_max_rows: int = 1_000_000
    #: OpenTelemetry traces over OTLP (the ``otel`` extra; ``OTEL_EXPORTER_OTLP_ENDPOINT``).
    otel: bool = False

    def __post_init__(self) -> None:
        if self.metrics not in METRICS_ACCESS:
            raise InvalidInput("metrics", f"metrics (RECALLERY_METRICS): one of {METRICS_ACCESS}")
        if self.request_log_days <= 0:
            raise InvalidInput("request_log_days", "request_log_days must be positive")
        if self.request_log_max_rows < 1:
            raise InvalidInput("request_log_max_rows", "request_log_max_rows must be at least 1")

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "recallery.db"

    @property
    def erasure_ledger_path(self) -> Path:
        return self.erasure_ledger or self.data_dir / "erasures.jsonl"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Read ``RECALLERY_*`` variables; keyword overrides win (the CLI passes its options)."""
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        if "RECALLERY_DATA_DIR" in env:
            values["data_dir"] = Path(env["RECALLERY_DATA_DIR"])
        if "RECALLERY_DATABASE_URL" in env:
            values["database_url"] = env["RECALLERY_DATABASE_URL"]
        if "RECALLERY_HOST" in env:
            values["host"] = env["RECALLERY_HOST"]
        if "RECALLERY_PORT" in env:
            values["port"] = int(env["RECALLERY_PORT"])
        if "RECALLERY_ADMIN_API_KEY" in env:
            values["admin_api_key"] = env["RECALLERY_ADMIN_API_KEY"]
        if "RECALLERY_MAX_ITEMS_PER_TYPE" in env:
            values["max_items_per_type"] = int(env["RECALLERY_MAX_ITEMS_PER_TYPE"])
        if "RECALLERY_EMBED_THREADS" in env:
            values["embed_threads"] = int(env["RECALLERY_EMBED_THREADS"])
        for name, kind in (
            ("chat_timeout_s", float),
            ("job_max_attempts", int),
            ("job_lease_s", float),
            ("database_pool_size", int),
            ("ann_threshold", int),
            ("max_body_bytes", int),
            ("max_import_bytes", int),
            ("erasure_ledger", Path),
            ("metrics", str),
            ("request_log", flag),
            ("request_log_queries", flag),
            ("request_log_days", float),
            ("request_log_max_rows", int),
            ("otel", flag),
        ):
            if f"{PREFIX}{name.upper()}" in env:
                values[name] = kind(env[f"{PREFIX}{name.upper()}"])
        values["providers"] = providers_from_env(env)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


def flag(text: str) -> bool:
    """A yes/no setting: 1, true, yes, on or 0, false, no, off (any case)."""
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise InvalidInput("setting", f"expected 1 or 0 (true or false), got {text!r}")


def providers_from_env(env: Mapping[str, str]) -> dict[str, ProviderConfig]:
    """``RECALLERY_PROVIDER_<NAME>_BASE_URL`` / ``_API_KEY`` pairs, keyed by lower-case name."""
    found: dict[str, ProviderConfig] = {}
    head, tail = f"{PREFIX}PROVIDER_", "_BASE_URL"
    for key, url in env.items():
        if key.startswith(head) and key.endswith(tail):
            name = key[len(head) : -len(tail)]
            balance = env.get(f"{head}{name}_KEYWORD_BALANCE")
            found[normalise_provider(name)] = ProviderConfig(
                url,
                env.get(f"{head}{name}_API_KEY", ""),
                None if balance is None else float(balance),
            )
    return found


def provider_variable(provider: str, suffix: str = "BASE_URL") -> str:
    """The environment variable that configures ``provider`` (its ``BASE_URL`` or
    ``API_KEY``), as :func:`providers_from_env` reads it."""
    return f"{PREFIX}PROVIDER_{normalise_provider(provider).upper()}_{suffix}"


def normalise_provider(name: str) -> str:
    """Provider names compare case-insensitively, with ``-`` and ``_`` alike (ZHIPU-AI)."""
    return name.strip().lower().replace("-", "_")
