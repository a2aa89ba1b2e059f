"""Probes for a load balancer or Kubernetes: ``/healthz`` (the process answers) and
``/readyz`` (it can serve: the store answers at the schema this recallery knows, the
in-process search indexes are built, the background worker, where this process runs one,
is alive). Neither needs a key, and neither says anything about what the store holds.

``serve`` builds the indexes in the background after start (:meth:`Readiness.warm`), so a
large SQLite store is live at once and ready once its first search would not wait.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from recallery.engine import Engine
from recallery.errors import RecalleryError

#: The paths, for the middleware that must not count or log them as API calls.
PROBES = ("/healthz", "/readyz")


@dataclass
class Readiness:
    """What ``/readyz`` checks beyond the store: set by whoever starts the process."""

    warmed: threading.Event = field(default_factory=threading.Event)
    #: The worker thread this process runs (None: no worker here, nothing to check).
    worker: threading.Thread | None = None

    def warm(self, engine: Engine) -> None:
        """Build the store's in-process indexes, then count as warm."""
        engine.warm()
        self.warmed.set()

    def checks(self, engine: Engine) -> dict[str, str]:
        """Each check's state: ``ok`` or why not."""
        found = {"store": "ok", "migrations": "ok", "indexes": "ok", "worker": "ok"}
        try:
            version, latest = engine.store.schema_version(), engine.store.latest_schema
            if version < latest:
                found["migrations"] = f"schema {version}, this recallery needs {latest}"
        except RecalleryError as exc:
            found["store"] = found["migrations"] = f"unavailable: {type(exc).__name__}"
        if not self.warmed.is_set():
            found["indexes"] = "building"
        if self.worker is None:
            found["worker"] = "not run in this process"
        elif not self.worker.is_alive():
            found["worker"] = "stopped"
        return found


def install_probes(app: FastAPI, readiness: Readiness) -> None:
    """Add the two probes to ``app`` and keep ``readiness`` as ``app.state.readiness``."""
    app.state.readiness = readiness

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @app.get("/readyz", include_in_schema=False)
    def readyz(request: Request) -> JSONResponse:
        checks = readiness.checks(request.app.state.engine)
        failing = {k: v for k, v in checks.items() if v not in ("ok", "not run in this process")}
        status = "ready" if not failing else "not ready"
        return JSONResponse(
            {"status": status, "checks": checks}, status_code=503 if failing else 200
        )


__all__ = ["PROBES", "Readiness", "install_probes"]
