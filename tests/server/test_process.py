"""The real `gamenight-server` process: health check, and a clean exit on SIGTERM / SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest


def _start(data_home: Path) -> tuple[subprocess.Popen[str], int]:
    """Start the server on a free port, its default database under `data_home`, and read the port it prints."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gamenight.server", "--port", "0", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_DATA_HOME": str(data_home)},  # never the user's own database
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on ws://" in line, line
    return proc, int(line.rsplit(":", 1)[1])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_health_check_and_clean_shutdown(sig, tmp_path):
    """GET /healthz answers 200 on the game port, and SIGTERM/SIGINT stop the server with exit code 0."""
    proc, port = _start(tmp_path)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as reply:
            assert reply.status == 200
        proc.send_signal(sig)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
