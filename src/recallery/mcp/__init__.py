"""recallery as an MCP server (the official ``mcp`` SDK, the ``mcp`` extra): tools over the
engine for one caller, whose key decides which memories exist and which tools are listed.

- :func:`~recallery.mcp.server.build_server`: the tools, a resource and a prompt;
- :mod:`~recallery.mcp.backend`: what the tools call (an engine, or the SDK of a server);
- :mod:`~recallery.mcp.http`: streamable HTTP at ``/mcp`` inside ``recallery serve``;
- :func:`~recallery.mcp.server.run_stdio`: stdio, for ``recallery mcp``.
"""
