"""memstrata as an MCP server (the official ``mcp`` SDK, the ``mcp`` extra): tools over the
engine for one caller, whose key decides which memories exist and which tools are listed.

- :func:`~memstrata.mcp.server.build_server`: the tools, a resource and a prompt;
- :mod:`~memstrata.mcp.backend`: what the tools call (an engine, or the SDK of a server);
- :mod:`~memstrata.mcp.http`: streamable HTTP at ``/mcp`` inside ``memstrata serve``;
- :func:`~memstrata.mcp.server.run_stdio`: stdio, for ``memstrata mcp``.
"""
