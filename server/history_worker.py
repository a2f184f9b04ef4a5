"""History requests (`list_games`, `get_game`, `leaderboard`, `profile`) answered in a process of their own.

Why: a replay of a long game and a query over many games are Python work. In a thread of the server process they
held the GIL for up to 5 ms at a time (the interpreter's switch interval), and the event loop, which carries
every live game, waited for it: under `bench/hostile.py`'s `history` attack an honest game's round trip p99
doubled. In a process of their own they use another core, or wait for the scheduler, never for a lock the loop
needs.

What: `HistoryWorker` keeps one worker process (a `ProcessPoolExecutor` of one, started through the forkserver
the AI pool uses, so it costs a fork of a process that has already imported everything). The worker opens its own
connection to the database the server uses (a SQLite file or a PostgreSQL URL), keeps a `Lobby` of its own for
`Lobby.history_answer` (the same code the server's lobby runs when there is no worker) and its replay cache, and
returns each answer as the frame to send, already encoded: the server's loop only writes bytes. A refusal comes
back as an encoded `error`; a bug comes back as its traceback, for the server to log.

A worker that dies (killed, out of memory, a crash in a C library) fails the requests it held with
`BrokenProcessPool`; the server answers them `rate_limited`, and the next request starts a new worker. The
worker ends by itself when the server process is gone (it checks every `WORKER_WATCH_S`), so a server killed
outright leaves nothing behind. The server's bounds stay where they were: how many requests wait, per session
and in all, and how long one may take (server/app.py, `GameServer._history`).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.util import Finalize
from typing import Any, TypeVar

from gamenight.protocol import encode
from gamenight.protocol.messages import Error, GetGame, Leaderboard, ListGames, Profile
from gamenight.server.lobby import Lobby
from gamenight.server.outbox import Refusal
from gamenight.server.store import open_store

log = logging.getLogger("gamenight.server")

WORKER_NAME = "gn-history"  # the worker's process name (`ps`, /proc/PID/comm; at most 15 characters)
WORKER_NICENESS = 10  # added to the worker's nice value: a live game's event loop wins the cores over history
WORKER_WATCH_S = 1.0  # how often a worker checks that the server process still exists

HistoryRequest = ListGames | GetGame | Leaderboard | Profile
Answer = tuple[bytes | None, str | None]
"""What the worker returns: the encoded reply (or `error`) frame, or None and the traceback of a bug."""

T = TypeVar("T")

_lobby: Lobby | None = None  # in the worker: the lobby that answers (its store, its replay cache)


def watch_server(server_pid: int) -> None:
    """In a worker process: end it at once when the server process is gone (a daemon thread checks every
    `WORKER_WATCH_S`). A pool worker waits on its task queue forever, so a server killed outright (SIGKILL, a crash,
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


def _start(target: str, server_pid: int) -> None:
    """In a new worker: lower priority, a name `ps` shows, a watch on the server, and the store opened once."""
    global _lobby
    os.nice(WORKER_NICENESS)
    try:
        with open("/proc/self/comm", "w", encoding="ascii") as comm:  # Linux: how `ps` and `top` name it
            comm.write(WORKER_NAME)
    except OSError:
        pass
    watch_server(server_pid)
    store = open_store(target)
    Finalize(store, store.close, exitpriority=10)  # a clean disconnect when the pool shuts the worker down
    _lobby = Lobby(history=store)


def answer(msg: HistoryRequest, viewer: str) -> Answer:
    """In the worker: the reply frame to one history request from the person whose token hash is `viewer`."""
    assert _lobby is not None, "the worker's initializer opens the store"
    try:
        return encode(_lobby.history_answer(msg, viewer)), None
    except Refusal as refusal:
        error = Error(code=refusal.code, message=refusal.message, id=msg.id, suggestion=refusal.suggestion)
        return encode(error), None
    except Exception:
        return None, traceback.format_exc()


def _ready() -> int:
    """In the worker: nothing to do but exist (the first task starts the process); its pid."""
    return os.getpid()


class HistoryWorker:
    """The server's side of the history worker: submits requests, starts a new worker when the last one died."""

    def __init__(self, target: str, preload: list[str]) -> None:
        self.target = target  # what `--db` named: a SQLite file or a postgresql:// URL (never ":memory:")
        self.preload = preload  # the modules the forkserver imports once (shared with the AI pool)
        self.pool: ProcessPoolExecutor | None = None
        self.restarts = 0  # workers started after one died

    def _current(self) -> ProcessPoolExecutor:
        """The pool of one worker, created on first use (the process starts with its first task)."""
        if self.pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(self.preload)
            self.pool = ProcessPoolExecutor(
                1, mp_context=context, initializer=_start, initargs=(self.target, os.getpid())
            )
        return self.pool

    def submit(self, msg: HistoryRequest, viewer: str) -> Future[Answer]:
        """Hand one request to the worker; a worker found dead is replaced first (its requests already failed)."""
        return self._submit(answer, msg, viewer)

    def warm(self) -> Future[int]:
        """Start the worker now (so the first request does not wait for it); resolves to the worker's pid."""
        return self._submit(_ready)

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Submit to the worker; if it died since the last request (the pool is broken), to a new one."""
        pool = self._current()
        try:
            return pool.submit(fn, *args)
        except BrokenProcessPool:
            log.warning("the history worker stopped; starting a new one")
            self.restarts += 1
            pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None
            return self._current().submit(fn, *args)

    def shutdown(self) -> None:
        """Stop the worker (a request it is answering finishes first; waiting ones are dropped)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
