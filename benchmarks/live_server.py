"""A ``recallery serve`` subprocess on a data directory, for the soak benchmark and the tests
that need a real server: start it and wait until it answers, read its resident memory and CPU
time, kill it or stop it, and restart it on the same directory and port.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from recallery.testing.ports import HOST, free_port
from recallery.testing.serve import wait_until_up

EMBD = "BAAI/bge-small-en-v1.5@Builtin"
LLM = "gpt-4o-mini@OpenAI"
#: The largest budget a memory may have (RAGFlow's ``MEMORY_SIZE_LIMIT``).
MAX_MEMORY_SIZE = 10 * 1024 * 1024
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0


class LiveServer:
    """``recallery serve`` (worker on) as a subprocess; its output goes to ``log``, appended
    over restarts. The port is chosen once, so a restart serves at the same URL."""

    def __init__(self, data_dir: Path, api_key: str, log: Path | None = None) -> None:
        self.data_dir = data_dir
        self.api_key = api_key
        self.log = log or data_dir.parent / f"{data_dir.name}.log"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/api/v1"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "recallery.db"

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        env = {**os.environ, "RECALLERY_ADMIN_API_KEY": self.api_key}
        command = [sys.executable, "-m", "recallery.cli", "serve", "--data-dir"]
        with self.log.open("a") as out:
            self.proc = subprocess.Popen(
                [*command, str(self.data_dir), "--port", str(self.port), "--log-level", "warning"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_until_up(f"http://{HOST}:{self.port}", self.proc, self.log, timeout)

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when the machine loses the process."""
        proc = self._running()
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def stop(self) -> None:
        """SIGTERM, as a service manager stops it, and wait (SIGKILL past the timeout)."""
        proc = self._running()
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def rss_mb(self) -> float:
        """Resident memory of the server process (``VmRSS``), in MB."""
        status = Path(f"/proc/{self._running().pid}/status").read_text()
        kb = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
        return round(int(kb) / 1024, 1)

    def cpu_s(self) -> float:
        """CPU seconds the server process has used (user and system, all its threads)."""
        fields = Path(f"/proc/{self._running().pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def tail(self, chars: int = 4000) -> str:
        return self.log.read_text()[-chars:] if self.log.exists() else ""

    def _running(self) -> subprocess.Popen[bytes]:
        if self.proc is None or self.proc.poll() is not None:
            raise RuntimeError("recallery serve is not running")
        return self.proc

    def __enter__(self) -> LiveServer:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop()


def client(url: str, api_key: str, timeout: float = 30.0) -> httpx.Client:
    return httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {api_key}"}, timeout=timeout
    )


def data(response: httpx.Response) -> Any:
    """The envelope's ``data``; anything but HTTP 200 with code 0 raises."""
    response.raise_for_status()
    body = response.json()
    if body["code"] != 0:
        raise RuntimeError(f"{response.request.url}: code {body['code']}: {body['message']}")
    return body["data"]


def create_memory(http: httpx.Client, name: str, memory_type: list[str]) -> str:
    """A new memory with the largest budget, so a load does not reach eviction soon; its id."""
    body = {
        "name": name,
        "memory_type": memory_type,
        "embd_id": EMBD,
        "llm_id": LLM,
        "memory_size": MAX_MEMORY_SIZE,
    }
    created = data(http.post("/memories", json=body))
    return str(created["id"])
