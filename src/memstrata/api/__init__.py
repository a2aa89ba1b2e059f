"""memstrata's REST API: RAGFlow's memory routes under ``/api/v1`` and memstrata's extensions."""

from __future__ import annotations

from memstrata.api.app import create_app

__all__ = ["create_app"]
