"""Run the real `gamenight-server` as a child process for tests that kill or restart it."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

NO_ROOM_CAPS = ("--limit", "rooms_per_ip=0", "--limit", "rooms_per_player=0")
"""Flags for a server that many tests' rooms share: no cap on the rooms one address (all of them 127.0.0.1) hosts."""


class ServerProcess:
    """A server child process on a free loopback port, with a database (a file, or a postgresql:// URL) that
    outlives it."""

    def __init__(self, db: Path | str, *extra: str, env: dict[str, str] | None = None) -> None:
        self.db = db
        self.extra = extra
        self.env = env  # the server's environment (default: the test's)
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def start(self) -> ServerProcess:
        """Start the server and wait until it prints the port it listens on."""
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gamenight.server",
                "--port",
                "0",
                "--db",
                str(self.db),
                "--log-level",
                "warning",
                "--ai-workers",
                "1",
                *self.extra,
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert "listening on" in line, f"server did not start: {line!r}"
        self.port = int(line.rsplit(":", 1)[1])
        return self

    @property
    def url(self) -> str:
        """The websocket URL of the running server."""
        return f"ws://127.0.0.1:{self.port}"

    def kill(self) -> None:
        """SIGKILL: no cleanup of any kind, as in a crash or a pulled plug."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int:
        """SIGTERM and wait; returns the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=15)
