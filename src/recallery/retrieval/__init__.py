"""Retrieval: fusion of keyword and vector candidates, and context assembly for prompts."""
