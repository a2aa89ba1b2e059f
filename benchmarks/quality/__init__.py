"""Retrieval quality: evidence recall on LoCoMo (engine, REST, MCP), MADial-Bench and SciFact
through REST, and the current-fact conversations of issue 42."""
