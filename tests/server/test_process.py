"""The real `gamenight-server` process: health check, and a clean exit on SIGTERM / SIGINT."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from gamenight.protocol.messages import ListGames
from tests.peer import Peer, ai_has_moved
from tests.procs import HAS_PROC, wait_for_grandchildren, wait_group_gone


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


GROUP_FLAGS = ("--ai-workers", "2", "--log-level", "warning")
"""Two AI workers (processes of the server's group, which a signal to the group reaches too), and a quiet log."""


def _start_in_group(tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    """Start the server with two AI workers as the leader of a process group of its own (in a terminal, Ctrl+C
    reaches the whole foreground group), its stderr in tmp_path/stderr; return it and the port it prints."""
    with (tmp_path / "stderr").open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", str(tmp_path / "games.db"), *GROUP_FLAGS],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on ws://" in line, line
    return proc, int(line.rsplit(":", 1)[1])


async def _stopped_clean(proc: subprocess.Popen[str], sig: signal.Signals, stderr: Path) -> None:
    """Send `sig` to the server's whole process group; it must exit 0, leave no process, and none of its processes
    may have printed a traceback (read once they are all gone: a worker may outlive the server by a moment)."""
    os.killpg(proc.pid, sig)
    assert await asyncio.to_thread(proc.wait, 60) == 0
    assert not await asyncio.to_thread(wait_group_gone, proc.pid)
    assert "Traceback" not in stderr.read_text()


@pytest.mark.skipif(not HAS_PROC, reason="reads the process tree from Linux's /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
async def test_signal_to_the_group_stops_server_and_workers_without_traceback(sig, tmp_path):
    """Ctrl+C in the server's terminal (SIGINT to its whole process group), or SIGTERM to the group, stops the server,
    its AI workers and its history worker with exit code 0, no traceback on stderr, and no process left."""
    proc, port = _start_in_group(tmp_path)
    try:
        peer = await Peer.connect(f"ws://127.0.0.1:{port}")
        await ai_has_moved(peer)
        await peer.request(ListGames)  # starts the history worker, beside the two AI workers
        await asyncio.to_thread(wait_for_grandchildren, proc.pid, 3)
        await _stopped_clean(proc, sig, tmp_path / "stderr")
        await peer.close()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.skipif(not HAS_PROC, reason="reads the process tree from Linux's /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_the_group_as_the_server_starts_stops_it_without_traceback(sig, tmp_path):
    """SIGINT or SIGTERM to the group the moment the server says it listens, while its forkserver and AI workers
    are still starting, stops it just as cleanly: exit code 0, no traceback on stderr, no process left."""
    proc, _ = _start_in_group(tmp_path)
    try:
        asyncio.run(_stopped_clean(proc, sig, tmp_path / "stderr"))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
