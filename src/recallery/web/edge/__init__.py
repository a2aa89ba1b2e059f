"""The HTTP edge that REST (:mod:`recallery.api`), the web UI (:mod:`recallery.web`) and MCP
over HTTP (:mod:`recallery.mcp.http`) share: who may call (:mod:`.guard`, with
:mod:`.throttle` counting failed keys and logins), how an error becomes an answer
(:mod:`.responses`), and how a declared request's fields are read and documented at the edge
(:mod:`.declared` with :mod:`.params`, :mod:`.schemas` and :mod:`.bodies`).

It sits between the engine and the adapters, so the adapters share it without importing
one another (the web UI does not import the REST API, which installs the web UI). It imports
FastAPI and Starlette, so it lives in an adapter room (beside the pages, importing none of
them): the core imports no web framework.
"""
