"""A real PostgreSQL server for the tests: initdb into a temporary folder, `postgres` on a free loopback port.

The tests (and CI) may run as root, which PostgreSQL refuses: then the folder belongs to the `postgres` user and
initdb and postgres run as that user. fsync is off — the tests kill gamenight servers, never PostgreSQL or the
machine, so what PostgreSQL has committed survives them either way — and each test gets a database of its own.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

BINARIES = ("initdb", "postgres")
PASSWORD = "gamenight-test"  # the `postgres` superuser's, asked over TCP


def find_bin_dir() -> Path | None:
    """The folder holding `initdb` and `postgres`: on PATH, or Debian's /usr/lib/postgresql/<version>/bin."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("postgres"):
        return Path(on_path).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    for folder in versions:
        if all(os.access(Path(folder) / b, os.X_OK) for b in BINARIES):
            return Path(folder)
    return None


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    """One PostgreSQL server in a temporary folder, stopped (and the folder removed) by `stop`."""

    def __init__(self, bin_dir: Path, fsync: bool = False) -> None:
        self.bin_dir = bin_dir
        self.fsync = fsync  # the tests run without (see above); bench/db.py with
        self.root = Path(tempfile.mkdtemp(prefix="gamenight-pg-"))
        self.port = free_port()
        self.user = None if os.geteuid() != 0 else "postgres"  # root may not run PostgreSQL
        self.proc: subprocess.Popen[bytes] | None = None
        self._databases = 0

    def start(self) -> PgServer:
        """initdb, start postgres and wait (60 s cap) until it accepts connections."""
        data = self.root / "data"
        if self.user is not None:
            shutil.chown(self.root, self.user)
        self.root.chmod(0o700)
        log = self.root / "initdb.log"
        password = self.root / "password"
        password.write_text(PASSWORD + "\n")
        if self.user is not None:
            shutil.chown(password, self.user)
        with log.open("wb") as out:
            # Over TCP (the tests' URLs) a password is asked, so a wrong one fails as on a real server.
            done = subprocess.run(
                [
                    self.bin_dir / "initdb",
                    "-D",
                    data,
                    "-U",
                    "postgres",
                    f"--pwfile={password}",
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                user=self.user,
                check=False,
            )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {log.read_text(errors='replace')[-2000:]}")
        self.proc = subprocess.Popen(
            [
                self.bin_dir / "postgres",
                "-D",
                data,
                "-p",
                str(self.port),
                "-k",
                self.root,
                "-c",
                "listen_addresses=127.0.0.1",
                *(() if self.fsync else ("-c", "fsync=off", "-c", "full_page_writes=off")),
                "-c",
                "max_connections=200",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(self.root / "postgres.log").open("wb"),
            user=self.user,
        )
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"postgres did not start: {(self.root / 'postgres.log').read_text(errors='replace')[-2000:]}"
                    ) from None
                time.sleep(0.05)

    def url(self, dbname: str) -> str:
        """The URL of one database of this server."""
        return f"postgresql://postgres:{PASSWORD}@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """A new, empty database; returns its URL."""
        import psycopg

        self._databases += 1
        name = f"t{self._databases}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 STRATEGY file_copy")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop a database `new_database` made (its connections are cut), so a session's tests keep little disk."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        """Fast shutdown (SIGINT), SIGKILL if it hangs; remove the folder."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)


def unavailable() -> str | None:
    """Why a PostgreSQL cannot be started for the tests (None if it can)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[test]')"
    if find_bin_dir() is None:
        return "PostgreSQL's initdb/postgres not found (on PATH or in /usr/lib/postgresql/*/bin); .ci/run installs them"
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no `postgres` user to run PostgreSQL as (the package creates it)"
    return None
