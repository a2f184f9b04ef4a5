"""`gamenight` with no URL runs a private server as a child process, and never leaves it behind."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from gamenight.client.__main__ import main, server_url
from gamenight.client.config import remember_name
from gamenight.client.local_server import LocalServer, LocalServerError, server_command
from tests.procs import HAS_PROC, living, wait_for_grandchildren, wait_group_gone


def _gone(pid: int, within: float = 10.0) -> bool:
    """True once no process `pid` exists (a zombie of ours is reaped by waitpid elsewhere)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _command(tmp_path: Path) -> list[str]:
    """The real private-server command, with a throw-away database."""
    return [*server_command(), "--db", str(tmp_path / "rooms.db")]


def test_start_answers_health_and_stop_leaves_no_process(tmp_path):
    """The child prints its URL, answers /healthz with 200, and is gone after stop()."""
    server = LocalServer(_command(tmp_path), log_path=tmp_path / "server.log")
    url = server.start()
    try:
        assert url.startswith("ws://127.0.0.1:")
        with urllib.request.urlopen(url.replace("ws://", "http://") + "/healthz", timeout=5) as reply:
            assert reply.status == 200
        pid = server.pid
        assert pid is not None and server.running
    finally:
        server.stop()
    assert not server.running and _gone(pid)


def test_main_without_url_runs_the_app_on_a_private_server(tmp_path, monkeypatch):
    """`gamenight` with no URL hands the app a live local URL and stops the server when the app returns."""
    seen: dict[str, object] = {}
    monkeypatch.setattr("gamenight.client.local_server.server_command", lambda: _command(tmp_path))
    before = set(_children())

    def fake_app(url: str, name: str | None, **options: object) -> int:
        with urllib.request.urlopen(url.replace("ws://", "http://") + "/healthz", timeout=5) as reply:
            seen["health"] = reply.status
        seen["url"], seen["name"], seen["key"] = url, name, options.get("session_key")
        seen["pids"] = set(_children()) - before
        return 0

    remember_name("ann")
    assert main([], run_app=fake_app) == 0
    assert seen["health"] == 200 and seen["name"] == "ann"
    assert seen["key"] == "local"  # the private server's port changes each run; its sessions are kept as "local"
    assert seen["pids"] and all(_gone(pid) for pid in seen["pids"])


def test_main_stops_the_server_when_the_app_crashes(tmp_path, monkeypatch):
    """A crash inside the app still stops the private server (try/finally)."""
    pids: set[int] = set()
    monkeypatch.setattr("gamenight.client.local_server.server_command", lambda: _command(tmp_path))
    before = set(_children())

    def crashing_app(url: str, name: str | None, **options: object) -> int:
        pids.update(set(_children()) - before)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        main(["--name", "ann"], run_app=crashing_app)
    assert pids and all(_gone(pid) for pid in pids)


def test_main_with_url_starts_no_server():
    """`gamenight ws://host:port` connects there, keeps its session under that URL, and starts nothing."""
    before = set(_children())
    calls: list[tuple[str, object]] = []

    def fake_app(url: str, name: str | None, **options: object) -> int:
        calls.append((url, options.get("session_key")))
        return 0

    assert main(["friend.example", "--name", "ann"], run_app=fake_app) == 0
    assert calls == [("ws://friend.example:8765", "ws://friend.example:8765")] and set(_children()) == before


def test_a_server_that_cannot_start_is_reported(tmp_path):
    """A child that exits before saying where it listens gives a clear error (with its log), not a hang."""
    command = [sys.executable, "-c", "import sys; print('no such thing', file=sys.stderr); sys.exit(3)"]
    server = LocalServer(command, log_path=tmp_path / "server.log", start_timeout=10)
    with pytest.raises(LocalServerError, match="no such thing"):
        server.start()
    assert not server.running


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_killed_client_leaves_no_orphan_server(tmp_path):
    """If the client process is killed outright (no cleanup runs), the kernel stops its server too."""
    script = textwrap.dedent(f"""
        import time
        from gamenight.client.local_server import LocalServer
        server = LocalServer({_command(tmp_path)!r})
        server.start()
        print(server.pid, flush=True)
        time.sleep(60)
    """)
    client = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2]
    )
    try:
        pid = int(client.stdout.readline())
        assert not _gone(pid, within=0.2)
        client.send_signal(signal.SIGKILL)
        client.wait()
        assert _gone(pid)
    finally:
        client.kill()
        client.wait()
        client.stdout.close()


@pytest.mark.skipif(not HAS_PROC, reason="reads the process tree from Linux's /proc")
def test_ctrl_c_stops_the_client_and_its_private_server_without_traceback(tmp_path, private_config):
    """Ctrl+C in the terminal (SIGINT to the client's whole process group: the client, its private server and the
    server's AI workers) ends the client with 130 and leaves no process, and no traceback in the server's log."""
    script = textwrap.dedent(f"""
        import asyncio, sys
        from gamenight.client import __main__ as cli, local_server
        from tests.peer import Peer, ai_has_moved
        local_server.server_command = lambda: {[*_command(tmp_path), "--ai-workers", "2"]!r}
        async def against_the_ai(url):
            await ai_has_moved(await Peer.connect(url))
            print("playing", flush=True)
            await asyncio.sleep(60)
        def playing(url, name, **options):
            asyncio.run(against_the_ai(url))
        sys.exit(cli.main(["--name", "ann"], run_app=playing))
    """)
    client = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        start_new_session=True,
    )
    try:
        assert client.stdout.readline() == "playing\n"
        (server,) = [pid for pid, (parent, _) in living().items() if parent == client.pid]
        wait_for_grandchildren(server, 2)  # the forkserver's two AI workers
        os.killpg(client.pid, signal.SIGINT)
        assert client.wait(60) == 130
        assert not wait_group_gone(client.pid)
        assert "Traceback" not in client.stderr.read()
        assert "Traceback" not in (private_config / "server.log").read_text()
    finally:
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait()
        client.stdout.close()
        client.stderr.close()


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("friend.example", "ws://friend.example:8765"),
        ("friend.example:9000", "ws://friend.example:9000"),
        ("ws://friend.example:8765", "ws://friend.example:8765"),
        ("wss://games.example/gn", "wss://games.example/gn"),
    ],
)
def test_server_addresses(typed, url):
    """A bare host means ws:// on the server's default port; ws:// and wss:// URLs are kept as given."""
    assert server_url(typed) == url


@pytest.mark.parametrize("typed", ["http://friend.example", "ws://", "friend.example:port"])
def test_bad_server_addresses(typed):
    """Anything but a ws:// or wss:// address is refused with a message."""
    with pytest.raises(argparse.ArgumentTypeError, match=r"server address|port"):
        server_url(typed)


def _children() -> list[int]:
    """The pids of this process's child processes (Linux /proc; empty elsewhere)."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            found.append(int(entry.parent.name))
    return found
