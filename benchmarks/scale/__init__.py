"""Scale: PostgreSQL beside SQLite, many tenants in one database, bulk loads, several servers
and workers on one database, and the approximate (HNSW) index against exact search."""
