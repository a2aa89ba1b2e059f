"""Model providers: ports, the local default embedder, remote OpenAI-compatible clients."""
