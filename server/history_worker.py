"""History requests (`list_games`, `get_game`, `leaderboard`, `profile`) answered in a process of their own.

Why: a replay of a long game and a query over many games are Python work. In a thread of the server process they
held the GIL for up to 5 ms at a time (the interpreter's switch interval), and the event loop, which carries
every live game, waited for it: under `bench/hostile.py`'s `history` attack an honest game's round trip p99
doubled. In a process of their own they use another core, or wait for the scheduler, never for a lock the loop
needs. No thread of the server process takes part either: a `concurrent.futures` process pool's manager and
feeder threads, pickling and unpickling every request and reply, were measured to cost the server process
most of what the worker saved it.

What: `HistoryWorker` keeps one worker process, started through the forkserver the AI pool uses (a fork of a
process that has already imported everything), on first use. The server talks to it over a socket pair that
the event loop reads like any other socket: a request is a length-prefixed pickle (its id, the message, the
asker's token hash), an answer a fixed header (its id, its kind, its length) and the frame to send, already
encoded, so the loop only writes bytes. The worker opens its own connection to the database the server uses
(a SQLite file or a PostgreSQL URL), keeps a `HistoryService` of its own (server/history_service.py: the same code
the server's lobby runs when there is no worker) and its replay cache, and answers in order. A refusal comes back
as an encoded `error`; a bug as its traceback, for the server to log.

A worker that dies (killed, out of memory, a crash in a C library) closes its end of the socket: the requests
it held fail with `WorkerLost` (the server answers them `rate_limited`), and the next request starts a new
worker — after RESTART_BACKOFF_S if the dead one never answered anything (a worker that cannot open the
database must not cost a process start per request). The worker ends by itself when the server process is
gone (it checks every `WORKER_WATCH_S`) or closes the socket. The server's bounds stay where they were: how many
requests wait, per session and in all, and how long one may take (server/app.py, `GameServer._history`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import pickle
import socket
import struct
import threading
import time
import traceback
from multiprocessing.process import BaseProcess

from gamenight.protocol import encode
from gamenight.protocol.messages import Error, GetGame, Leaderboard, ListGames, Profile
from gamenight.server.history_service import HistoryService
from gamenight.server.outbox import Refusal
from gamenight.server.store import open_store

log = logging.getLogger("gamenight.server")

WORKER_NAME = "gn-history"  # the worker's process name (`ps`, /proc/PID/comm; at most 15 characters)
WORKER_NICENESS = 10  # added to the worker's nice value: a live game's event loop wins the cores over history
WORKER_WATCH_S = 1.0  # how often a worker checks that the server process still exists

RESTART_BACKOFF_S = 1.0  # after a worker died without answering anything, no new one for this long
READ_SIZE = 256 * 1024  # bytes read from the worker's socket at once

HistoryRequest = ListGames | GetGame | Leaderboard | Profile
Answer = tuple[bytes | None, str | None]
"""What the worker answers: the encoded reply (or `error`) frame, or None and the traceback of a bug."""
REQUEST = struct.Struct("!I")  # a request's length, before its pickle
REPLY = struct.Struct("!QBI")  # an answer's request id, kind (FRAME or BUG) and length, before its bytes
FRAME, BUG = 0, 1


class WorkerLost(Exception):
    """The history worker ended before it answered (it died, or the server is stopping)."""


def watch_server(server_pid: int) -> None:
    """In a worker process: end it at once when the server process is gone (a daemon thread checks every
    `WORKER_WATCH_S`). A worker waits for its next task forever, so a server killed outright (SIGKILL, a crash,
    an OOM kill) would otherwise leave it, and the forkserver it came from, running."""

    def watch() -> None:
        while True:
            time.sleep(WORKER_WATCH_S)
            try:
                os.kill(server_pid, 0)  # signal 0: only "does it exist"
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:  # exists, owned by someone else: the pid was reused, the server is gone
                os._exit(0)

    threading.Thread(target=watch, name="server-watch", daemon=True).start()


def _serve(sock: socket.socket, target: str, server_pid: int) -> None:
    """The worker process: lower priority, a name `ps` shows, a watch on the server, the store opened once; then
    answer requests in order until the server closes its end of the socket."""
    os.nice(WORKER_NICENESS)
    with contextlib.suppress(OSError), open("/proc/self/comm", "w", encoding="ascii") as comm:
        comm.write(WORKER_NAME)  # Linux: how `ps` and `top` name it (elsewhere it keeps its name)
    watch_server(server_pid)
    store = open_store(target)
    service = HistoryService(store)
    requests = sock.makefile("rb")
    try:
        while len(head := requests.read(REQUEST.size)) == REQUEST.size:
            body = requests.read(REQUEST.unpack(head)[0])
            request_id, msg, viewer = pickle.loads(body)  # from the server process only: its private socket pair
            frame, bug = answer(service, msg, viewer)
            data = frame if frame is not None else str(bug).encode()
            sock.sendall(REPLY.pack(request_id, FRAME if frame is not None else BUG, len(data)) + data)
    except OSError:
        return  # the server closed its end (or died): this worker's life ends with it
    finally:
        store.close()


def answer(service: HistoryService, msg: HistoryRequest, viewer: str) -> Answer:
    """The reply frame to one history request from the person whose token hash is `viewer`."""
    try:
        return encode(service.answer(msg, viewer)), None
    except Refusal as refusal:
        error = Error(code=refusal.code, message=refusal.message, id=msg.id, suggestion=refusal.suggestion)
        return encode(error), None
    except Exception:
        return None, traceback.format_exc()


class HistoryWorker:
    """The server's side of the history worker: starts it on first use, sends requests, resolves their futures
    from the answers the event loop reads off the socket, and starts a new worker after one died."""

    def __init__(self, target: str, preload: list[str]) -> None:
        self.target = target  # what `--db` named: a SQLite file or a postgresql:// URL (never ":memory:")
        self.preload = preload  # the modules the forkserver imports once (shared with the AI pool)
        self.process: BaseProcess | None = None
        self.sock: socket.socket | None = None
        self.pending: dict[int, asyncio.Future[Answer]] = {}  # request id -> its answer, in the order sent
        self.ids = itertools.count(1)
        self.restarts = 0  # workers started after one died
        self._answered = False  # the current worker answered at least once
        self._not_before = 0.0  # (monotonic) no new worker before this
        self._inbox = bytearray()  # bytes read from the worker, not yet a whole answer
        self._outbox = bytearray()  # bytes for the worker the socket did not take yet

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None before the first request)."""
        return self.process.pid if self.process is not None and self.sock is not None else None

    def submit(self, msg: HistoryRequest, viewer: str) -> asyncio.Future[Answer]:
        """Send one request to the worker (started first if none runs); the future resolves to its answer, or
        fails with WorkerLost if the worker ends first. Call on the event loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Answer] = loop.create_future()
        if self.sock is None and not self._start(loop):
            future.set_exception(WorkerLost("the history worker failed lately; not restarted yet"))
            return future
        request_id = next(self.ids)
        self.pending[request_id] = future
        body = pickle.dumps((request_id, msg, viewer), protocol=pickle.HIGHEST_PROTOCOL)
        self._send(loop, REQUEST.pack(len(body)) + body)
        return future

    def _start(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Start a worker (through the forkserver: a fork, a few milliseconds); False while backing off."""
        if time.monotonic() < self._not_before:
            return False
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(self.preload)
        mine, theirs = socket.socketpair()
        process = context.Process(target=_serve, args=(theirs, self.target, os.getpid()), name=WORKER_NAME, daemon=True)
        try:
            process.start()
        except Exception:
            log.exception("could not start the history worker")
            mine.close()
            self._not_before = time.monotonic() + RESTART_BACKOFF_S
            return False
        finally:
            theirs.close()  # the worker holds its own copy: its death is this socket's end
        mine.setblocking(False)
        self.process, self.sock, self._answered = process, mine, False
        self._inbox.clear()
        self._outbox.clear()
        loop.add_reader(mine.fileno(), self._readable)
        return True

    def _send(self, loop: asyncio.AbstractEventLoop, data: bytes) -> None:
        """Write to the worker without blocking: what the socket does not take waits for it to be writable."""
        assert self.sock is not None
        if self._outbox:
            self._outbox += data
            return
        try:
            sent = self.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._lost("could not write to the history worker")
            return
        if sent < len(data):
            self._outbox += data[sent:]
            loop.add_writer(self.sock.fileno(), self._writable)

    def _writable(self) -> None:
        """The worker's socket takes more: send what waits."""
        assert self.sock is not None
        try:
            sent = self.sock.send(self._outbox)
        except BlockingIOError:
            return
        except OSError:
            self._lost("could not write to the history worker")
            return
        del self._outbox[:sent]
        if not self._outbox:
            asyncio.get_running_loop().remove_writer(self.sock.fileno())

    def _readable(self) -> None:
        """Answers arrived: resolve each whole one's future (a future nobody waits for any more is skipped)."""
        assert self.sock is not None
        try:
            data = self.sock.recv(READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._lost("the history worker stopped")
            return
        inbox = self._inbox
        inbox += data
        while len(inbox) >= REPLY.size:
            request_id, kind, length = REPLY.unpack_from(inbox)
            end = REPLY.size + length
            if len(inbox) < end:
                break
            payload = bytes(inbox[REPLY.size : end])
            del inbox[:end]
            self._answered = True
            future = self.pending.pop(request_id, None)
            if future is not None and not future.done():
                future.set_result((payload, None) if kind == FRAME else (None, payload.decode(errors="replace")))

    def _lost(self, why: str) -> None:
        """The worker ended: every request it held fails, and the next request starts a new worker."""
        self._close()
        self.restarts += 1
        if not self._answered:
            self._not_before = time.monotonic() + RESTART_BACKOFF_S
        pending, self.pending = self.pending, {}
        if pending:
            log.warning("%s with %d requests unanswered; the next request starts a new one", why, len(pending))
        else:
            log.warning("%s; the next request starts a new one", why)
        for future in pending.values():
            if not future.done():
                future.set_exception(WorkerLost(why))

    def _close(self) -> None:
        """Stop reading and writing the worker's socket and close it (the worker sees the end and exits)."""
        if self.sock is None:
            return
        loop = asyncio.get_running_loop()
        loop.remove_reader(self.sock.fileno())
        loop.remove_writer(self.sock.fileno())
        self.sock.close()
        self.sock = None

    def shutdown(self) -> None:
        """Stop the worker: it sees the socket close and exits; requests still waiting fail with WorkerLost."""
        self._close()
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(WorkerLost("the server is stopping"))
