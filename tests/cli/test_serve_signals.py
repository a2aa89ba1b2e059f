"""``recallery serve`` stopped as a service manager stops it (SIGTERM) or from a terminal
(SIGINT) runs its shutdown code: status 0, and the SQLite store closed (its WAL files are
removed by the last connection's close)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from recallery.testing.ports import HOST, free_port
from recallery.testing.serve import wait_until_up

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_closes_the_store_and_exits_cleanly(tmp_path: Path, sig: int) -> None:
    data, log, port = tmp_path / "data", tmp_path / "serve.log", free_port()
    command = [sys.executable, "-m", "recallery.cli", "serve", "--data-dir", str(data)]
    env = {**os.environ, "RECALLERY_ADMIN_API_KEY": "rc-signal-test-key"}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*command, "--port", str(port), "--no-worker"], env=env, stdout=out, stderr=out
        )
    try:
        wait_until_up(f"http://{HOST}:{port}", proc, log, 60)
        assert (data / "recallery.db-wal").exists()  # open, in WAL mode
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not (data / "recallery.db-wal").exists(), "the store was not closed"
    assert "Aborted" not in log.read_text()
