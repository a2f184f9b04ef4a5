"""Storage faults a real host hits: a database that stops taking writes, and one that cannot be read at start-up."""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gamenight.protocol.messages import MakeMove
from gamenight.server.records import RoomSaved
from gamenight.server.store import Store
from tests.peer import Peer, seat_pair


def _health(port: int) -> tuple[int, str]:
    """GET /healthz: the status and the body."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _stop_writes(pid: int) -> None:
    """Make every file write of the server fail from now on, as a full disk does.

    The file size limit (RLIMIT_FSIZE, set from outside with prlimit) is the fault used because it binds root
    too: the tests may run as root, for whom a read-only file or directory is no obstacle. SQLite sees the same
    failed write(2) it sees on a full disk; Python ignores SIGXFSZ, so only the write fails.
    """
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))


def _allow_writes(pid: int) -> None:
    """Lift the file size limit again."""
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


async def test_a_move_that_cannot_be_stored_is_refused_and_never_shown(server_process):
    """With the disk refusing writes, a move gets `unavailable`, nobody sees it, /healthz says 503, and a restart
    brings back exactly the moves that were shown."""
    first = server_process()
    alice, bob = await Peer.connect(first.url, "alice"), await Peer.connect(first.url, "bob")
    code, state = await seat_pair(alice, bob)
    shown = []
    for _ in range(2):
        mover = alice if state.to_move == [0] else bob
        legal = (await mover.at(code, state.seq)).legal
        await mover.send(MakeMove(room=code, move=legal[0], seq=state.seq))
        shown.append(legal[0])
        state = await alice.expect("state", seq=state.seq + 1)
    assert _health(first.port)[0] == 200
    assert first.proc is not None
    _stop_writes(first.proc.pid)
    mover, other = (alice, bob) if state.to_move == [0] else (bob, alice)
    refused = await mover.request(MakeMove, room=code, move=state.legal[0], seq=state.seq)
    assert refused.type == "error" and refused.code == "unavailable" and refused.room == code
    told = await other.expect("error", code="unavailable")
    assert told.room == code
    status, body = _health(first.port)
    assert status == 503 and "cannot store" in body
    again = await mover.request(MakeMove, room=code, move=state.legal[0], seq=state.seq)
    assert again.type == "error" and again.code == "unavailable"
    assert not [m for m in alice.seen + bob.seen if m.type == "state" and m.seq > state.seq]
    tokens = [alice.welcome.token, bob.welcome.token]
    _allow_writes(first.proc.pid)
    first.kill()
    await alice.close()
    await bob.close()
    second = server_process()
    alice = await Peer.connect(second.url, "alice", resume=tokens[0])
    restored = await alice.expect("state")
    assert restored.moves == shown
    await alice.close()
    assert second.stop() == 0


async def test_rooms_with_bad_rows_are_skipped_and_the_rest_restored(server_process):
    """Rooms whose stored options are not JSON or whose seat is out of range are skipped (and listed on /healthz);
    the server starts and the good room resumes."""
    first = server_process()
    alice, bob = await Peer.connect(first.url, "alice"), await Peer.connect(first.url, "bob")
    good, _ = await seat_pair(alice, bob)
    broken_json, _ = await seat_pair(alice, bob)
    broken_seat, _ = await seat_pair(alice, bob)
    token = alice.welcome.token
    first.kill()
    await alice.close()
    await bob.close()
    db = sqlite3.connect(first.db)
    db.execute("UPDATE rooms SET options = '{not json' WHERE code = ?", (broken_json,))
    db.execute("UPDATE seats SET seat = 7 WHERE room = ? AND seat = 1", (broken_seat,))
    db.commit()
    db.close()
    second = server_process()
    status, body = _health(second.port)
    assert status == 200 and broken_json in body and broken_seat in body and good not in body
    alice = await Peer.connect(second.url, "alice", resume=token)
    restored = await alice.expect("state")
    assert restored.room == good
    assert not [m for m in alice.seen if getattr(m, "room", None) in (broken_json, broken_seat)]
    await alice.close()
    assert second.stop() == 0


def _garbage(path: Path) -> None:
    """A file that is not SQLite at all."""
    path.write_bytes(b"these are not the pages you are looking for\n" * 100)


def _truncated(path: Path) -> None:
    """A real database cut after its first page, as a failed copy leaves it."""
    store = Store(str(path))
    store.write([RoomSaved(f"R{n:04}", "othello", {"x": "y" * 500}, {}, "ann", False) for n in range(200)])
    store.close()
    data = path.read_bytes()
    path.write_bytes(data[:4096])


def _folder(path: Path) -> None:
    """A folder where the database file should be."""
    path.mkdir()


@pytest.mark.parametrize("spoil", [_garbage, _truncated, _folder], ids=["garbage", "truncated", "folder"])
def test_an_unusable_database_gives_one_line_and_an_exit_code(tmp_path, spoil):
    """A database that is garbage, truncated or a folder stops start-up with one line on stderr and exit code 2."""
    path = tmp_path / "games.db"
    spoil(path)
    done = subprocess.run(
        [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", str(path), "--log-level", "warning"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert str(path) in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root opens read-only files for writing; the folder case covers it")
def test_a_read_only_database_gives_one_line_and_an_exit_code(tmp_path):
    """A database file the server may not write stops start-up with one line and exit code 2."""
    path = tmp_path / "games.db"
    Store(str(path)).close()
    path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        tmp_path.chmod(0o755)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
