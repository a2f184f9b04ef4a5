"""A private gamenight server run as a child process, for playing without anyone else's server.

The server is started as `python -m gamenight.server` (never imported: the client must not depend on the server's
code), on a port the OS picks. Its first stdout line names the URL; `/healthz` answering 200 means it is
ready. The child never outlives the client: `stop` runs on normal exit, on Ctrl+C and from `atexit`, and
on Linux the kernel sends it SIGTERM if the client dies without cleaning up (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import atexit
import os
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 5.0
HEALTH_POLL_S = 0.05
PR_SET_PDEATHSIG = 1  # from <sys/prctl.h>
_LISTENING = re.compile(r"listening on (wss?://\S+)")
LOG_TAIL_CHARS = 2000


class LocalServerError(RuntimeError):
    """The private server could not be started; the text says why (with the end of its log)."""


def server_command() -> list[str]:
    """How the private server is started: this interpreter, loopback only, any free port.

    `-P` keeps the current directory off `sys.path`, so a `gamenight/` folder where the user happens to stand
    cannot run instead of the installed server.
    """
    return [sys.executable, "-P", "-m", "gamenight.server", "--host", "127.0.0.1", "--port", "0"]


def _die_with_parent(parent: int) -> None:
    """In the child before exec: ask the kernel for SIGTERM when the client dies (Linux only)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    # The parent may have died between fork and prctl; then nobody would ever signal us.
    if os.getppid() != parent:
        os._exit(1)


def _preexec() -> Callable[[], object] | None:
    """The preexec_fn for this platform (None where prctl does not exist)."""
    if not sys.platform.startswith("linux"):
        return None
    parent = os.getpid()
    return lambda: _die_with_parent(parent)


class LocalServer:
    """Start, check and stop one child server process. Use as a context manager, or call start/stop."""

    def __init__(
        self, command: list[str] | None = None, *, log_path: Path | None = None, start_timeout: float = START_TIMEOUT_S
    ) -> None:
        self.command = command or server_command()
        self.log_path = log_path
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.url: str | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id, once started."""
        return self.process.pid if self.process else None

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self.process is not None and self.process.poll() is None

    def start(self) -> str:
        """Start the child, wait until it answers /healthz, and return its websocket URL."""
        self._log = self._open_log()
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log or subprocess.DEVNULL,
            preexec_fn=_preexec(),
            close_fds=True,
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + self.start_timeout
        try:
            self.url = self._read_url(deadline)
            self._drain_stdout()
            self._wait_healthy(deadline)
        except BaseException:
            self.stop()
            raise
        return self.url

    def _open_log(self) -> IO[bytes] | None:
        """The server's log file (truncated on each start), or None to discard its output."""
        if self.log_path is None:
            return None
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        return self.log_path.open("wb")

    def _read_url(self, deadline: float) -> str:
        """Read the child's first stdout line and take the URL from it."""
        assert self.process is not None and self.process.stdout is not None
        try:
            line = _read_line(self.process.stdout, deadline)
        except LocalServerError as exc:
            raise LocalServerError(self._explain(str(exc))) from None
        match = _LISTENING.search(line)
        if match is None:
            raise LocalServerError(self._explain(f"the server did not say where it listens (it said {line!r})"))
        return match.group(1)

    def _drain_stdout(self) -> None:
        """Keep reading the child's stdout so it can never block on a full pipe."""
        stdout = self.process.stdout if self.process else None
        if stdout is not None:
            threading.Thread(target=lambda: stdout.read(), name="gamenight-server-stdout", daemon=True).start()

    def _wait_healthy(self, deadline: float) -> None:
        """Poll http://HOST:PORT/healthz until it answers 200."""
        assert self.url is not None
        health = re.sub(r"^ws", "http", self.url).rstrip("/") + "/healthz"
        while time.monotonic() < deadline:
            if not self.running:
                raise LocalServerError(self._explain("the server stopped while starting"))
            if _healthy(health):
                return
            time.sleep(HEALTH_POLL_S)
        raise LocalServerError(self._explain(f"the server did not answer {health} in time"))

    def _explain(self, problem: str) -> str:
        """`problem` followed by the end of the server's log, if there is one."""
        if self.log_path is None or not self.log_path.exists():
            return problem
        tail = self.log_path.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL_CHARS:].strip()
        return f"{problem}\n{tail}" if tail else problem

    def stop(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL if it lingers) and wait for it; safe to call twice."""
        atexit.unregister(self.stop)
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if process.stdout is not None:
                process.stdout.close()
            self.process = process  # keep pid/returncode readable after stopping
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def _healthy(url: str) -> bool:
    """True if an HTTP GET of `url` answers 200 (refused or failing connections are just "not yet")."""
    try:
        with urllib.request.urlopen(url, timeout=1.0) as reply:
            return bool(reply.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _read_line(stream: IO[bytes], deadline: float) -> str:
    """One line from a pipe, waiting at most until `deadline`; raises LocalServerError on timeout or EOF."""
    fd = stream.fileno()
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while b"\n" not in data:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LocalServerError("the server did not start in time")
            if not selector.select(remaining):
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                raise LocalServerError("the server exited before it was ready")
            data += chunk
    return data.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
