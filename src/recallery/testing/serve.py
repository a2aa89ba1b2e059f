"""A live ``recallery serve`` for tests: a subprocess on a free loopback port over a fresh data
directory, handed over once its health route answers, and stopped afterwards.

    with live_serve(tmp_path / "data", {"RECALLERY_ADMIN_API_KEY": "rc-..."}) as (url, log):
        httpx.get(f"{url}/api/v1/health")
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from recallery.testing.ports import HOST, free_port

__all__ = ["ServeFailed", "live_serve", "wait_until_up"]


class ServeFailed(RuntimeError):
    """The server exited, or did not answer in time; the message holds its log."""


@contextmanager
def live_serve(
    data_dir: Path, env: Mapping[str, str] | None = None, *, timeout_s: float = 60.0
) -> Iterator[tuple[str, Path]]:
    """``recallery serve`` on ``data_dir`` with ``env`` added to this process's environment:
    its base URL and its log file (beside the data directory)."""
    log = data_dir.parent / f"{data_dir.name}.log"
    port = free_port()
    command = [sys.executable, "-m", "recallery.cli", "serve", "--data-dir", str(data_dir)]
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*command, "--port", str(port)],
            env={**os.environ, **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://{HOST}:{port}"
    try:
        wait_until_up(url, proc, log, timeout_s)
        yield url, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    """Return once ``url``'s health route answers; ServeFailed with the log if ``proc`` exits
    or ``timeout_s`` passes first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServeFailed(f"recallery serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{url}/api/v1/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise ServeFailed(f"recallery serve did not answer in {timeout_s}s:\n{log.read_text()}")
