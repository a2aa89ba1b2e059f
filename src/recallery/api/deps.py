"""What every route depends on: the engine and the authenticated caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from recallery.engine import Engine
from recallery.errors import Unauthorized
from recallery.models import Principal
from recallery.web.edge.guard import PRINCIPAL

bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer <key>`.")


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def caller(
    request: Request,
    engine: Annotated[Engine, Depends(_engine)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    """The caller the guard authenticated before the body was read (or, for an app mounted
    without the guard, the holder of the key)."""
    known = request.scope.get(PRINCIPAL)
    if isinstance(known, Principal):
        return known
    if credentials is None or not credentials.credentials:
        raise Unauthorized("Missing API key.")
    return engine.authenticate(credentials.credentials)


EngineDep = Annotated[Engine, Depends(_engine)]
Actor = Annotated[Principal, Depends(caller)]
