"""The server's logging: uvicorn's configuration, with access lines that name the path but
never the query string. Queries carry user text (a search's words, filter values), and a log
line would keep it after the entry it found has been erased."""

from __future__ import annotations

import copy
import logging
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


def log_config() -> dict[str, Any]:
    """uvicorn's default logging configuration with :class:`PathOnly` on the access logger."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["path_only"] = {"()": PathOnly}
    config["loggers"][ACCESS_LOGGER]["filters"] = ["path_only"]
    return config
