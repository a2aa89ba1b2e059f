"""A live ``recallery serve`` over real HTTP: after an error the client's keep-alive connection
still serves the next request, and the access log names paths without their query strings.

The server is the real ``serve`` command in a subprocess, with one bug planted at start-up
(listing a memory's jobs raises) so that a genuine 500 can be provoked; nothing needs a model.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from recallery.testing.serve import live_serve

pytestmark = pytest.mark.slow

ADMIN_KEY = "rc-connections-test-admin-key"
#: Run by the server's interpreter at start-up (``sitecustomize``), before ``serve``.
PLANTED_BUG = """\
from recallery.engine import Engine


def broken(*args, **kwargs):
    raise RuntimeError("planted bug")


Engine.jobs = broken
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The base URL of a live server with the planted bug, and the file its output goes to."""
    plant = tmp_path_factory.mktemp("plant")
    (plant / "sitecustomize.py").write_text(PLANTED_BUG)
    path = os.pathsep.join(p for p in (str(plant), os.environ.get("PYTHONPATH")) if p)
    env = {"RECALLERY_ADMIN_API_KEY": ADMIN_KEY, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}
    with live_serve(tmp_path_factory.mktemp("serve-data"), env) as found:
        yield found


@pytest.fixture
def client(server: tuple[str, Path]) -> Iterator[httpx.Client]:
    """One keep-alive connection at most, as the admin."""
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    url = f"{server[0]}/api/v1"
    # A generous read timeout: a loaded CI machine must not pass for a dropped connection.
    with httpx.Client(base_url=url, headers=headers, limits=limits, timeout=60) as c:
        yield c


def local_port(response: httpx.Response) -> int:
    """The client-side port of the connection a response came on."""
    port: int = response.extensions["network_stream"].get_extra_info("client_addr")[1]
    return port


def test_the_connection_outlives_every_kind_of_error(client: httpx.Client) -> None:
    memory = client.post(
        "/memories",
        json={"name": "conn", "memory_type": ["raw"], "embd_id": "m@Builtin", "llm_id": "a@b"},
    ).json()["data"]
    failing = [
        (client.build_request("GET", f"/memories/{memory['id']}/jobs"), 500),  # the planted bug
        (client.build_request("GET", "/audit", params={"page": str(10**18)}), 400),
        (
            client.build_request(
                "POST",
                "/memories",
                content=b"{broken",
                headers={"Content-Type": "application/json"},
            ),
            400,
        ),
        (client.build_request("GET", "/nowhere"), 404),
        (client.build_request("GET", "/memories", headers={"Authorization": "Bearer nope"}), 401),
    ]
    for request, status in failing:
        failed = client.send(request)
        assert failed.status_code == status, failed.text
        assert {"code", "message", "data"} <= set(failed.json())
        good = client.get("/memories")
        assert good.status_code == 200 and good.json()["code"] == 0
        assert local_port(good) == local_port(failed), f"the connection was dropped after {status}"


def test_the_access_log_names_the_path_but_not_the_query(
    client: httpx.Client, server: tuple[str, Path]
) -> None:
    secret = "wherethesecretkeyishidden"
    response = client.get(
        "/messages/search", params={"query": secret, "memory_id": "0" * 32, "agent_id": secret}
    )
    assert response.json() == {"code": 0, "message": True, "data": []}  # no such memory
    client.get("/health", params={"marker": secret})
    log = server[1]
    deadline = time.monotonic() + 10
    while "GET /api/v1/health HTTP/1.1" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    text = log.read_text()
    assert '"GET /api/v1/messages/search HTTP/1.1" 200' in text
    assert '"GET /api/v1/health HTTP/1.1" 200' in text
    assert secret not in text
