"""Speed in one process: ingest, write and search latency at 10k and 100k entries, what each
retrieval mechanism and each revision costs a search, extraction per turn, concurrent
writes, restart, a soak under load and the web UI's pages."""
