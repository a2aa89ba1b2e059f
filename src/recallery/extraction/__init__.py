"""Extraction: prompts, the extractor (LLM call + validation) and reconciliation."""
