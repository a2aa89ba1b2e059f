"""The server's logging: uvicorn's configuration, with access lines that name the path but
never the query string. Queries carry user text (a search's words, filter values), and a log
line would keep it after the entry it found has been erased. ``serve --log-format json``
writes every line as one JSON object (:class:`JsonLines`) for a log collector."""

from __future__ import annotations

import copy
import json
import logging
from datetime import UTC, datetime
from typing import Any

ACCESS_LOGGER = "uvicorn.access"


class PathOnly(logging.Filter):
    """Cuts the query string off the request path of an access line.

    uvicorn logs each request as ``'%s - "%s %s HTTP/%s" %d'`` with the arguments (client,
    method, path with query, HTTP version, status); the third one is shortened here.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].partition("?")[0], *args[3:])
        return True


class JsonLines(logging.Formatter):
    """One JSON object a line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``;
    an access line also ``client``, ``method``, ``path`` and ``status``; an error its
    ``exception``."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        args = record.args
        if record.name == ACCESS_LOGGER and isinstance(args, tuple) and len(args) == 5:
            line |= dict(zip(("client", "method", "path", "http", "status"), args, strict=True))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def log_config(json_lines: bool = False) -> dict[str, Any]:
    """uvicorn's default logging configuration with :class:`PathOnly` on the access logger;
    with ``json_lines``, every handler writes :class:`JsonLines`, recallery's loggers too."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["path_only"] = {"()": PathOnly}
    config["loggers"][ACCESS_LOGGER]["filters"] = ["path_only"]
    if json_lines:
        config["formatters"] = {"json": {"()": JsonLines}}
        for handler in config["handlers"].values():
            handler["formatter"] = "json"
        config["loggers"]["recallery"] = {"handlers": ["default"], "level": "INFO"}
    return config
