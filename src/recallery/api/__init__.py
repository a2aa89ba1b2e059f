"""recallery's REST API: RAGFlow's memory routes under ``/api/v1`` and recallery's extensions."""

from __future__ import annotations

from recallery.api.app import create_app

__all__ = ["create_app"]
