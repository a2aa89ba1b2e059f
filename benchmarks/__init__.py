"""Benchmarks, grouped by what they answer: quality/ (does search find the right turns:
LoCoMo, MADial-Bench, SciFact, current facts), speed/ (how fast one process writes, searches,
extracts, restarts and serves), scale/ (PostgreSQL against SQLite, many tenants, several
processes, the approximate index) and peers/ (other memory systems measured alike).
support.py holds what they measure with, live_server.py a real server to measure, and
report.py turns benchmarks/results/ into tables."""
