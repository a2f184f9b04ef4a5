"""The network layer: websockets connections in, lobby decisions out, and the tasks time needs.

Everything that decides anything lives in `Lobby` / `Room`. This module only decodes frames, hands
them over, and carries out the returned `Outbox`: it encodes each message once and queues the
bytes to its recipients, runs AI searches in a process pool (never on the event loop), and keeps one
tick clock per live game.
"""

from __future__ import annotations

import asyncio
import importlib
import ipaddress
import json
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import ssl
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State as SocketState

from gamenight.protocol import MAX_FRAME, ErrorCode, ProtocolError, decode, encode
from gamenight.protocol.codec import request_id_of
from gamenight.protocol.identity import address_of, new_nonce
from gamenight.protocol.messages import (
    Analyse,
    Error,
    GetGame,
    Hello,
    HelloNonce,
    Leaderboard,
    ListGames,
    Message,
    Profile,
)
from gamenight.server.admission import LobbyLimits
from gamenight.server.bucket import Bucket
from gamenight.server.directory import UNAVAILABLE_TEXT
from gamenight.server.fair_queue import AiQueue, Waiter
from gamenight.server.fanout import Fanout, Frames, Held, Split, split
from gamenight.server.games import REGISTRY, bots
from gamenight.server.guard import FrameLimits, GuardedConnection, SharedBudget, refusal
from gamenight.server.history_worker import Answer, HistoryWorker, WorkerLost, watch_server
from gamenight.server.hooks import LoneNode, NodeHooks
from gamenight.server.lobby import Lobby
from gamenight.server.metrics import Metrics
from gamenight.server.outbox import ArmFlag, Disconnect, Send
from gamenight.server.outgoing import Batcher, Outgoing
from gamenight.server.records import (
    VOID,
    AnalysisSaved,
    GameFinished,
    Moderated,
    NameClaimed,
    Record,
    StoreBackend,
    StoreError,
    TournamentSaved,
)
from gamenight.server.review import ReviewLimits
from gamenight.server.review_runner import ReviewRunner
from gamenight.server.room import AiTurn, Outbox, Refusal, StartClock
from gamenight.server.sessions import Proof
from gamenight.server.store import open_store
from gamenight.server.timers import Clock, LoopClock, Timers

if TYPE_CHECKING:
    pass

log = logging.getLogger("gamenight.server")

SWEEP_INTERVAL_S = 1.0
ADMINS_RELOAD_S = 5.0  # how often the admins' list is read again (`gamenight-server admin` edits it in the store)
KICKED_CLOSE = 4000  # the close code of a connection an admin closed (kick or ban); the error before it says why
HISTORY_TIMEOUT_S = 5.0  # a history request not answered by then gets `rate_limited`
MAX_HISTORY_PENDING = 32  # history requests waiting for the history thread at once, server-wide
MAX_HISTORY_PER_SESSION = 2  # ... and from one session
HISTORY_RETRY_MS = 1000  # the `retry_after_ms` of a history request refused as busy (or lost with its worker)
PURGE_INTERVAL_S = 3600.0  # how often closed rooms past their retention are deleted from the database
REVIEW_SLOT = "(review)"  # how the fair queue counts the workers game reviews hold (no room has this code)
AI_GRACE_MS = 2000  # an AI answer later than its budget plus this is abandoned for a fallback move
HELLO_TIMEOUT_S = 10.0  # a connection that has not said hello by then is closed
IDLE_CLOSE = 1001  # "going away": an idle lobby connection, closed to free its slot
POLICY_VIOLATION = 1008
AI_NICENESS = 10  # added to the AI workers' nice value
CLOSE_TIMEOUT_S = 2.0
TOO_MANY_CONNECTIONS = "too many connections from your address\n"
PENALIZED = "your address broke a limit; wait a few seconds\n"
REFUSALS = {why: refusal(why) for why in (TOO_MANY_CONNECTIONS, PENALIZED)}
"""Each reason's canned HTTP 429, written to a connection refused on accepting it (server/guard.py)."""
HISTORY_REQUESTS = (ListGames, GetGame, Leaderboard, Profile)
"""Requests answered in the history thread (`GameServer._history`)."""
AI_MODULES = tuple(entry.ai for entry in REGISTRY.values() if entry.ai is not None)
"""Every game's AI module, preloaded in the AI workers (never in this process)."""
FORKSERVER_PRELOAD = ["gamenight.server.ai.play", *AI_MODULES, "gamenight.server.history_worker"]
"""What the forkserver imports once, for the AI workers and the history worker it forks (one forkserver serves both,
and whichever starts first starts it with this list)."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a server cleanly (server/__main__.py); its helper processes ignore them (start_forkserver)."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """How a server runs: where it listens and how much it may use."""

    host: str = "127.0.0.1"
    port: int = 8765
    ai_workers: int | None = None
    ping_interval: float | None = 20.0
    db: str | None = None  # SQLite file (or ":memory:") or a postgresql:// URL; None keeps nothing
    certfile: str | None = None  # with keyfile: serve wss://
    keyfile: str | None = None
    rate: float = 20.0  # messages per second a connection may send, sustained
    burst: int = 40  # and in one burst
    max_strikes: int = 60  # rate-limited messages tolerated before the connection is closed
    metrics: bool = False  # serve GET /metrics and run the event-loop lag probe
    idle_timeout_s: float = 1800.0  # a connection in no room that sends nothing this long is closed
    lag_probe_s: float = 2.0  # how often players in a clocked game are pinged, for lag compensation
    max_connections_per_ip: int = 50  # open connections from one address (0: no cap)
    messages_per_ip_per_s: float = 100.0  # messages read from one address's connections together (then they wait)
    closed_room_retention_s: float = 7 * 24 * 3600.0  # a closed room's row is deleted this long after it closed
    unused_claim_s: float = 30 * 24 * 3600.0  # a claim never played under (no game, no seat) ends this long after
    lobby_batch_s: float = 0.25  # at most one `lobby` push per watcher this often (all changes since the last)
    spectator_batch_ms: int = 200  # a spectator gets its room's traffic at most once this often (0: each at once)
    lobby_limits: LobbyLimits = field(default_factory=LobbyLimits)  # rooms, spectators, chat
    frame_limits: FrameLimits = field(default_factory=FrameLimits)  # per connection: bytes, frames, pings, backlog
    cluster: str | None = None  # redis:// URL: run as one node of a cluster (server/cluster); None: a lone server
    redis_password: str | None = None  # the Redis password (from a file or the environment) if not in the URL
    redis_ca: str | None = None  # a rediss:// Redis's CA (PEM file)
    cluster_secret: bytes = b""  # what the nodes sign their Redis records with (server/cluster/trust.py); required
    node_id: str | None = None  # this node's name in the cluster (default: host:port and a random suffix)
    public_url: str | None = None  # how clients reach this node (default: ws://host:port)
    reserved_names: tuple[str, ...] = ()  # names nobody may claim or play under (the operator's), look-alikes too
    reached_as: tuple[str, ...] = ()  # the URLs clients dial: a hello signed for another is refused (empty: any)
    loopback: bool = False  # also listen on 127.0.0.1 (plain ws://, a free port) for the web front door's clients
    review_limits: ReviewLimits = field(default_factory=ReviewLimits)  # game review: budget, queue, bounds


class TokenBucket(Bucket):
    """A connection's message allowance (server/bucket.py): `burst` at once, refilled at `rate` per second, on the
    monotonic clock, counting the refused messages not yet forgiven."""

    __slots__ = ("strikes",)

    def __init__(self, rate: float, burst: int) -> None:
        super().__init__(rate, burst, time.monotonic())
        self.strikes = 0  # refused messages not yet forgiven

    def spend(self) -> bool:
        """Spend one token if there is one (a strike forgiven); count a strike when there is not."""
        if self.take(time.monotonic()):
            self.strikes = max(0, self.strikes - 1)
            return True
        self.strikes += 1
        return False


def _address(ws: ServerConnection) -> str:
    """Who a connection counts as for the per-address caps: its IPv4 address, or its IPv6 /64 network (one host
    usually holds a whole /64, so counting single IPv6 addresses would cap nothing); "" if the socket no longer tells.
    """
    try:
        peername = ws.remote_address
    except (AttributeError, OSError):
        return ""
    return _peer_address(peername)


def _peer_address(peername: object) -> str:
    """`_address` of a socket's peer name (a (host, port, ...) tuple)."""
    try:
        address = ipaddress.ip_address(str(peername[0]).split("%")[0])  # type: ignore[index]
    except (TypeError, IndexError, OSError, ValueError):
        return ""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _worker_start(server_pid: int) -> None:
    """In a new AI worker: run at a lower priority (the event loop must win the cores whenever it has work), and
    end when the server process is gone.

    A pool worker waits on its task queue forever, and the forkserver lives as long as any worker does, so a
    server killed outright (SIGKILL, a crash, an OOM kill) would leave both behind on the host. A daemon thread
    checks every `WORKER_WATCH_S` that the server still exists and otherwise ends the worker at once
    (`watch_server`, server/history_worker.py: the history worker does the same).
    """
    os.nice(AI_NICENESS)
    watch_server(server_pid)


def start_forkserver() -> None:
    """Start the forkserver now, with STOP_SIGNALS ignored, so that it and every worker it forks ignore them.

    Ctrl+C in a terminal sends SIGINT to the whole foreground process group, and a service manager stopping a
    service (systemd) sends SIGTERM to all of its processes: the AI workers died in a `KeyboardInterrupt`
    traceback each, or in the middle of a search, which the server then logged with a traceback of its own. Only
    the server process must act on them: it stops its workers (`GameServer.stop`), and a worker whose server died
    ends by itself (`watch_server`); SIGKILL still ends any of them. (CPython's resource tracker, also started here,
    ignores both signals for the same reason.)

    An ignored signal stays ignored across exec, Python puts no `KeyboardInterrupt` handler over an ignored SIGINT
    at start-up, and the forkserver gives every child it forks the handlers it started with: so the forkserver
    ignores them while it imports `FORKSERVER_PRELOAD` and the workers from their first instruction, which a handler
    set by the workers' own code could not cover (every worker starts as the server starts).

    The caller blocks STOP_SIGNALS around this (server/__main__.py), so that one that comes while this process
    ignores them waits for the event loop instead of being lost. A GameServer started without this (in a test, say)
    starts the forkserver when it first needs it, with the caller's signal handling.
    """
    multiprocessing.get_context("forkserver").set_forkserver_preload(FORKSERVER_PRELOAD)
    handlers = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def _warm() -> None:
    """In a worker process: import every game's AI so the first real search starts at once."""
    for module in AI_MODULES:
        importlib.import_module(module)


def _run_ai(turn: AiTurn) -> tuple[str, dict[str, Any]]:
    """In a worker process: ask the AI of `turn` for its move (the event loop's process never loads the AI)."""
    from gamenight.server.ai.play import choose_move

    return choose_move(turn.game, turn.state, turn.seat, level=turn.ai.level, bot=turn.ai.bot, budget_ms=turn.budget_ms)


class GameServer:
    """Owns the lobby, the open connections, the AI pool and the clocks of one running server."""

    def __init__(self, config: ServerConfig, clock: Clock | None = None) -> None:
        self.config = config
        self.clock: Clock = clock or LoopClock()  # the game's time and its timers (server/timers.py)
        self.store: StoreBackend | None = open_store(config.db) if config.db else None
        # History is read in a process of its own, through a connection of its own (a file or PostgreSQL
        # database; ":memory:" has one connection only, so there it is read on the loop). server/history_worker.py
        self.history = HistoryWorker(config.db, FORKSERVER_PRELOAD) if config.db and config.db != ":memory:" else None
        self._history_pending = 0
        self._history_waiting: dict[str, int] = {}  # session -> its history requests not answered yet
        self._history_asked: dict[ServerConnection, Coroutine[Any, Any, None]] = {}  # the answer to await next
        self.lobby = Lobby(
            ai_bots=bots(), history=self.store, limits=config.lobby_limits, reserved=config.reserved_names
        )
        self.per_ip: dict[str, int] = {}  # open connections by remote address
        self.penalized: dict[str, float] = {}  # address -> until when (monotonic) it may not connect
        self.ip_budget: dict[str, SharedBudget] = {}  # address -> the messages its connections may send together
        self.connections: dict[str, ServerConnection] = {}
        self.nonces: dict[ServerConnection, str] = {}  # each connection's hello_nonce, until its hello is welcomed
        self.tasks: set[asyncio.Task[Any]] = set()
        self._pool: Executor | None = None
        self._server: Server | None = None
        self._loopback: Server | None = None  # the plain listener on 127.0.0.1 of `config.loopback`
        self.metrics = Metrics()
        self.timers = Timers(self.clock, self._tick, self._flag, self.metrics.tick_late)  # live ticks, flags
        self.outgoing = Outgoing(self.store, on_backlog=self.not_reading, max_backlog=config.frame_limits.max_backlog)
        self.lobby_pushes = Batcher(config.lobby_batch_s, self._push_lobby)
        self.fanout = Fanout(self.outgoing)  # spectators' room traffic, one frame per window (server/fanout.py)
        self.closing = False
        self.ai_queue = AiQueue(config.ai_workers or os.cpu_count() or 1)  # the workers' fair queue
        self._ai_wakers: dict[Waiter, asyncio.Future[None]] = {}  # a waiting AI turn -> what wakes it
        self.node: NodeHooks = LoneNode(self)  # a cluster's node, set by `start` with `config.cluster`
        self.lobby.reviews.limits = config.review_limits  # game review (issue 36): its positions run below AI turns
        self.reviews = ReviewRunner(
            self.lobby.reviews,
            pool=self._ai_pool,
            may_start=self.ai_queue.background_may_start,
            take=partial(self.ai_queue.take, REVIEW_SLOT, False),
            release=partial(self._ai_release, REVIEW_SLOT, False),
            deliver=self.deliver,
            spawn=self.spawn,
            grace_ms=AI_GRACE_MS,
        )

    # -- lifecycle ----------------------------------------------------------------------------------
    async def start(self) -> Server:
        """Start listening; returns the websockets server (its sockets tell the bound port)."""
        if self.config.cluster is not None:
            from gamenight.server.cluster.node import ClusterNode  # redis loads only for a cluster

            self.node = ClusterNode(self, self.config.cluster)
        if self.store is not None:
            self._expire_claims()
            self.lobby.sessions.load_claims(self.store.claimed_names())
            self.lobby.moderation.load_admins(self.store.admins())
            self.lobby.moderation.load_sanctions(self.store.sanctions(time.time()))
            self.lobby.ratings.load(self.store.ratings())
            if self.node.restores_rooms:  # a cluster's rooms are each restored by the node that claims it
                for tournament in self.lobby.tournaments.load(self.store.tournaments()):
                    log.error("could not restore tournament %s; it stays in the database", tournament)
                stored = self.store.unfinished_rooms(self.lobby.directory.skipped)
                self.deliver(self.lobby.restore(stored, self.clock.now()))
            for code, reason in self.lobby.directory.skipped:
                log.error("could not restore room %s (%s); it stays in the database, closed to players", code, reason)
        options: dict[str, Any] = dict(
            process_request=self._http,
            max_size=MAX_FRAME,
            compression=None,
            create_connection=type(
                "Connection",
                (GuardedConnection,),
                {"limits": self.config.frame_limits, "on_abort": self._penalize, "admit": self._admit, "held": {}},
            ),
            ping_interval=self.config.ping_interval,
            ping_timeout=self.config.ping_interval,
            # A flooder's close frame waits behind its unread frames; don't hold its socket long for it.
            close_timeout=CLOSE_TIMEOUT_S,
        )
        self._server = await serve(self.handler, self.config.host, self.config.port, ssl=self._tls(), **options)
        if self.config.loopback:  # the web front door's clients run on this host (server/web.py)
            self._loopback = await serve(self.handler, "127.0.0.1", 0, **options)
        await self.node.start()
        self.spawn(self._sweeper())
        self.spawn(self._lag_prober())
        self.spawn(self._warm_ai())
        self.spawn(self.reviews.run())
        if self.config.metrics:
            self.spawn(self.metrics.probe_loop())
        return self._server

    @property
    def port(self) -> int:
        """The port actually bound (useful when asked for port 0)."""
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def loopback_port(self) -> int:
        """The port of the plain listener on 127.0.0.1 (`ServerConfig.loopback`)."""
        assert self._loopback is not None
        return int(self._loopback.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Close every connection cleanly (close frames sent), stop clocks and the AI pool."""
        self.closing = True  # disconnects during shutdown must not start new AI turns or clocks
        self.lobby_pushes.cancel()
        self.fanout.cancel()
        self.outgoing.flush()
        for listener in (self._server, self._loopback):
            if listener is not None:
                listener.close()
                await listener.wait_closed()
        self.timers.stop()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.outgoing.flush()  # what the last disconnects decided, stored
        await self.node.stop()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self.history is not None:
            self.history.shutdown()
        if self.store is not None:
            self.store.close()

    def join_workers(self) -> None:
        """Wait for the AI workers to end (blocking: run it in a thread, after `stop`), as a process does before it
        exits. CPython 3.11's exit hook for process pools wakes each pool's manager thread through a pipe that thread
        may be closing at that moment (an `OSError: Bad file descriptor` traceback at exit, seen under load); a pool
        already joined has no manager thread left to wake."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def _tls(self) -> ssl.SSLContext | None:
        """A TLS context when a certificate was given (clients then use wss://)."""
        if not self.config.certfile:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.config.certfile, self.config.keyfile)
        return context

    def _refused_why(self, address: str) -> str | None:
        """Why a new connection from `address` is refused (at its connection cap, or waiting out a penalty), or None."""
        cap = self.config.max_connections_per_ip
        if cap and self.per_ip.get(address, 0) >= cap:
            return TOO_MANY_CONNECTIONS
        if self.penalized.get(address, 0.0) > time.monotonic():
            return PENALIZED
        return None

    def _admit(self, peername: object) -> bytes | None:
        """On accepting a TCP connection, before websockets reads it: the 429 to write if it is refused, or None to
        let it through (server/guard.py)."""
        why = self._refused_why(_peer_address(peername))
        return None if why is None else REFUSALS[why]

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Answer plain HTTP health checks on the websocket port; let upgrades through. The refusals of `_admit` are
        asked again here: connections accepted together pass it before any of them counts toward the cap."""
        if (why := self._refused_why(_address(connection))) is not None:
            return connection.respond(HTTPStatus.TOO_MANY_REQUESTS, why)
        if request.path == "/healthz":
            return self._health(connection)
        if self.config.metrics and request.path.startswith("/metrics"):
            if request.path == "/metrics?reset=1":
                self.metrics.reset()
            snapshot = self.metrics.snapshot(
                connections=len(self.connections), rooms=len(self.lobby.rooms), clocks=len(self.timers.ticks)
            )
            response = connection.respond(HTTPStatus.OK, json.dumps(snapshot) + "\n")
            response.headers["Content-Type"] = "application/json"
            return response
        return None

    def _health(self, connection: ServerConnection) -> Response:
        """200 "ok" (and the rooms start-up could not restore) while records are stored; 503 saying why if not."""
        failure = self.outgoing.failure
        if failure is not None:
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, f"unhealthy: cannot store games: {failure}\n")
        skipped = "".join(f"not restored: room {code}: {reason}\n" for code, reason in self.lobby.directory.skipped)
        return connection.respond(HTTPStatus.OK, "ok\n" + skipped + self.node.health())

    # -- connections -----------------------------------------------------------------------------------
    async def handler(self, ws: ServerConnection) -> None:
        """One connection: hello first (in time), then rate-limited requests until it closes; cleanup always runs."""
        session: str | None = None
        bucket = TokenBucket(self.config.rate, self.config.burst)
        ip = _address(ws)
        self.per_ip[ip] = self.per_ip.get(ip, 0) + 1
        counted: bool | None = None  # counted in the cluster's per-address connections (server/cluster)
        try:
            counted = await self.node.admit(ip)
            if counted is False:
                await self.close_connection(ws, POLICY_VIOLATION, "too many connections from your address")
                return
            self.nonces[ws] = nonce = new_nonce()  # the hello of this connection signs it (protocol/identity.py)
            self.outgoing.add_frame([ws], encode(HelloNonce(nonce=nonce, server=self.lobby.server_id)))
            while True:
                if session is None:
                    frame = await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT_S)
                elif self._in_a_room(session):
                    frame = await ws.recv()
                else:
                    try:
                        frame = await asyncio.wait_for(ws.recv(), self.config.idle_timeout_s)
                    except TimeoutError:
                        await self.close_connection(ws, IDLE_CLOSE, "idle")
                        break
                waited = self.config.messages_per_ip_per_s and await self._address_turn(ip)
                if waited and ws.state is SocketState.CLOSED:
                    # Over its address's budget and gone: what it left queued (up to websockets' max_queue frames)
                    # is dropped, not read at the budget's pace while it holds a place under the address's caps.
                    break
                if self.config.rate and not bucket.spend():
                    if bucket.strikes > self.config.max_strikes:
                        await self.close_connection(ws, POLICY_VIOLATION, "too many messages")
                        break
                    self.outgoing.add_frame(
                        [ws],
                        encode(
                            Error(
                                code=ErrorCode.RATE_LIMITED,
                                message="too many messages; slow down",
                                id=request_id_of(frame),
                                retry_after_ms=bucket.retry_after_ms(),
                            )
                        ),
                    )
                    continue
                session = await self.node.receive(ws, session, frame)
                if (waiting := self._history_asked.pop(ws, None)) is not None:
                    await waiting  # this connection's next request waits for its history answer (order kept)
        except TimeoutError:
            await self.close_connection(ws, POLICY_VIOLATION, "no hello")
        except ConnectionClosed:
            pass
        finally:
            self.nonces.pop(ws, None)
            if counted:
                self.node.depart(ip)
            if (left := self.per_ip.pop(ip) - 1) > 0:
                self.per_ip[ip] = left
            else:
                if (budget := self.ip_budget.pop(ip, None)) is not None:
                    budget.close()
            # A resumed session may already live on a newer connection: only its own connection releases it.
            if session is not None and self.connections.get(session) is ws:
                del self.connections[session]
                self.deliver(self.lobby.disconnect(session, self.clock.now()))
                self.node.disconnected(session)

    async def _address_turn(self, ip: str) -> bool:
        """Wait until the address's shared message budget allows one more message; True if that meant waiting.

        An address flooding from many connections (each within its own rate) is slowed, not answered: its
        connections stop being read, so the flood waits in its own socket buffers and costs no work here.
        """
        rate = self.config.messages_per_ip_per_s
        if not rate:
            return False
        budget = self.ip_budget.get(ip)
        if budget is None:
            budget = self.ip_budget[ip] = SharedBudget(rate)
        return await budget.turn()

    def _in_a_room(self, session: str) -> bool:
        """True while a session sits or watches somewhere (those connections are never idle-closed)."""
        client = self.lobby.clients.get(session)
        if self.node.routed(session):
            return True  # it plays or watches on another node
        return client is not None and bool(client.rooms)

    def receive(self, ws: ServerConnection, session: str | None, frame: Any) -> str | None:
        """Handle one frame; returns the connection's session (set by a successful hello)."""
        try:
            msg = decode(frame)
        except ProtocolError as exc:
            self._reply_error(ws, ErrorCode.BAD_MESSAGE, str(exc), exc.request_id)
            return session
        return self.handle_message(ws, session, msg)

    def handle_message(self, ws: ServerConnection, session: str | None, msg: Message) -> str | None:
        """Handle one decoded message; returns the connection's session (set by a successful hello)."""
        try:
            if session is None:
                return self._hello(ws, msg)
            if isinstance(msg, HISTORY_REQUESTS) and self.history is not None:
                self._history(ws, session, msg)  # answered before this connection's next frame is read
                return session
            self.deliver(self.lobby.handle(session, msg, self.clock.now()), (ws, session, msg.id))
            if isinstance(msg, Analyse):
                self.reviews.wake()
        except Exception:
            log.exception("bug while handling %s", msg.type)
            self._reply_error(ws, ErrorCode.INTERNAL_ERROR, "the server hit a bug; it has been logged", msg.id)
        return session

    def _history(self, ws: ServerConnection, session: str, msg: ListGames | GetGame | Leaderboard | Profile) -> None:
        """Answer a history request in the history worker (queries and replays never hold the event loop, nor the
        GIL it needs: server/history_worker.py).

        The connection's handler awaits the answer before it reads that connection's next frame, so each client
        gets its replies in the order it asked, and other connections go on meanwhile. At most
        MAX_HISTORY_PENDING requests wait at once; past that, or past HISTORY_TIMEOUT_S, the answer is
        `rate_limited`, as it is for a request the worker held when it died (the next one starts a new worker).
        """
        assert self.history is not None
        client = self.lobby.clients.get(session)
        if client is None:
            return  # the session ended before its request was read
        mine = self._history_waiting.get(session, 0)
        if self._history_pending >= MAX_HISTORY_PENDING or mine >= MAX_HISTORY_PER_SESSION:
            self._history_refused(ws, msg.id, "busy")
            return
        self._history_pending += 1
        self._history_waiting[session] = mine + 1
        future = self.history.submit(msg, client.token_hash)
        future.add_done_callback(partial(self._history_done, session))  # counted until the worker answers
        self._history_asked[ws] = self._history_answer(ws, msg, future)

    def _history_refused(self, ws: ServerConnection, request_id: int | None, why: str) -> None:
        """Refuse a history request for now (`rate_limited`, saying when to ask again): the history is busy or
        its worker is restarting."""
        text = f"the history is {why}; try again in a moment"
        self._reply_error(ws, ErrorCode.RATE_LIMITED, text, request_id, retry_after_ms=HISTORY_RETRY_MS)

    def _history_done(self, session: str, future: asyncio.Future[Answer]) -> None:
        """A history request left the worker (answered, failed, or given up on long ago)."""
        if not future.cancelled():
            future.exception()  # seen here: an answer nobody waits for any more is not an error
        self._history_pending -= 1
        if (left := self._history_waiting.pop(session, 1) - 1) > 0:
            self._history_waiting[session] = left

    async def _history_answer(
        self, ws: ServerConnection, msg: ListGames | GetGame | Leaderboard | Profile, future: asyncio.Future[Answer]
    ) -> None:
        """Send the history worker's answer, or say the history is busy if it takes too long (or the worker died)."""
        try:
            frame, bug = await asyncio.wait_for(asyncio.shield(future), HISTORY_TIMEOUT_S)
        except TimeoutError:
            self._history_refused(ws, msg.id, "busy")
            return
        except WorkerLost:  # logged once by the worker's side (server/history_worker.py)
            self._history_refused(ws, msg.id, "restarting")
            return
        except Exception:
            log.exception("bug while handling %s", msg.type)
            self._reply_error(ws, ErrorCode.INTERNAL_ERROR, "the server hit a bug; it has been logged", msg.id)
            return
        if frame is None:
            log.error("bug while handling %s in the history worker:\n%s", msg.type, bug)
            self._reply_error(ws, ErrorCode.INTERNAL_ERROR, "the server hit a bug; it has been logged", msg.id)
            return
        # A spectator first gets the room traffic held for it (server/fanout.py), as with any direct reply.
        frames = self.fanout.take(ws) if self.fanout.holds(ws) else []
        self.outgoing.add((), [*frames, ([ws], frame)])

    def _hello(self, ws: ServerConnection, msg: Message) -> str | None:
        """The first message must be hello; on success the connection gets its session."""
        if not isinstance(msg, Hello):
            self._reply_error(ws, ErrorCode.NOT_READY, "send hello first", msg.id)
            return None
        try:
            client, out = self.lobby.hello(msg, self.clock.now(), _address(ws), self.proof(ws))
        except Refusal as refusal:
            self._reply_error(ws, refusal.code, refusal.message, msg.id, refusal.suggestion, until=refusal.until)
            return None
        previous = self.connections.get(client.session)
        if previous is not None and previous is not ws:
            self.spawn(self.close_connection(previous, 1000, "resumed on another connection"))
        self.connections[client.session] = ws
        self.nonces.pop(ws, None)  # signed once: nothing later on this connection can prove a key with it
        log.info("hello from %s (session %s)", client.name, client.session)
        self.deliver(out, (ws, client.session, msg.id))
        self.node.welcomed(client, msg.resume is not None)
        return client.session

    def proof(self, ws: ServerConnection) -> Proof | None:
        """What a hello on `ws` must sign to prove a key: this server's id, the connection's nonce (None once it is
        welcomed), and the addresses it is reached by (`--reached-as`, with this machine's own loopback addresses of
        its ports, which the web front door's clients dial: only a program on the player's own machine could relay
        a hello signed for those)."""
        nonce = self.nonces.get(ws)
        if nonce is None:
            return None
        addresses = tuple(address_of(url) for url in self.config.reached_as)
        if addresses:
            ports = [self.port, *([self.loopback_port] if self._loopback is not None else [])]
            addresses += tuple(
                address_of(f"ws://{host}:{port}") for port in ports for host in ("127.0.0.1", "localhost")
            )
        return Proof(self.lobby.server_id, nonce, addresses)

    def _reply_error(
        self,
        ws: ServerConnection,
        code: ErrorCode,
        text: str,
        request_id: int | None,
        suggestion: str | None = None,
        retry_after_ms: int | None = None,
        until: float | None = None,
    ) -> None:
        """Send an error to one connection, after whatever was decided for it before (a closed one is skipped)."""
        error = Error(
            code=code, message=text, id=request_id, suggestion=suggestion, retry_after_ms=retry_after_ms, until=until
        )
        self.outgoing.add_frame([ws], encode(error))

    def _penalize(self, ws: ServerConnection, _reason: str) -> None:
        """A connection was dropped for breaking a frame limit: its address waits before connecting again."""
        penalty = self.config.frame_limits.abort_penalty_s
        if penalty:
            self.penalized[_address(ws)] = time.monotonic() + penalty

    def not_reading(self, ws: ServerConnection) -> None:
        """A client that stopped reading holds too much unsent data: abort it (its seats wait for a resume)."""
        if isinstance(ws, GuardedConnection):
            ws.abort(f"not reading ({ws.transport.get_write_buffer_size()} bytes unsent)")
        else:
            ws.transport.abort()

    async def close_connection(self, ws: ServerConnection, code: int, reason: str) -> None:
        """Close a connection after writing what is still queued for it (an error saying why, say)."""
        self.outgoing.flush()
        await ws.close(code, reason)

    async def _disconnect(self, ws: ServerConnection, reason: str) -> None:
        """An admin closed this connection: once the decision is stored (its error to the connection written),
        close it; a decision that could not be stored closes nothing."""
        self.outgoing.flush()
        if self.outgoing.failure is None:
            await ws.close(KICKED_CLOSE, reason)

    # -- carrying out decisions ---------------------------------------------------------------------------
    def deliver(self, out: Outbox, requester: tuple[ServerConnection, str, int | None] | None = None) -> None:
        """Queue the records and every message (encoded once per message) for the next flush; start the effects.

        The flush (`server.outgoing`) stores the records before it writes any frame, so a move anybody has
        seen is on disk, whatever happens next. If they cannot be stored, no frame of this decision is sent:
        `_lost` takes the rooms offline and the requester (connection, session, request id) gets `unavailable`.
        """
        plan = self._spectators(out) if self.config.spectator_batch_ms and out.sends else None
        frames, stored = self._frames(out.sends) if plan is None else self._split_frames(out.sends, plan)
        actions = [record for record in out.records if isinstance(record, Moderated)]
        if actions:
            stored = partial(self._moderation_stored, actions, stored)
        self.node.publish_changes()  # queued on the bus before these frames: a new room is routable first
        if out.records:
            self.outgoing.add(out.records, frames, lambda records, exc: self._lost(records, requester, exc), stored)
        elif frames or stored is not None:
            self.outgoing.add((), frames, stored=stored)
        if self.closing:
            return
        if self.lobby.listing.pending():
            self.lobby_pushes.poke()
        for effect in out.effects:
            if isinstance(effect, AiTurn):
                self.spawn(self._ai_turn(effect))
            elif isinstance(effect, StartClock):
                self._start_clock(effect)
            elif isinstance(effect, ArmFlag):
                self._arm_flag(effect)
            elif isinstance(effect, Disconnect) and (ws := self.connections.get(effect.session)) is not None:
                self.spawn(self._disconnect(ws, effect.reason))

    def _frames(self, sends: list[Send]) -> tuple[Frames, None]:
        """Nobody watches these rooms and nothing waits: every message to its connected recipients at once."""
        frames: Frames = []
        connections = self.connections
        for send in sends:
            targets = [ws for s in send.to if (ws := connections.get(s)) is not None]
            if targets:
                frames.append((targets, encode(send.message)))
        return frames, None

    def _split_frames(self, sends: list[Send], plan: Split) -> tuple[Frames, Callable[[], Frames] | None]:
        """The frames to write now, and what to run at the flush once the records are stored: the spectators'
        copies held for their rooms' windows, and what waited for the direct recipients (server/fanout.py)."""
        frames: Frames = []
        held: list[Held] = []
        connections = self.connections
        for index, send in enumerate(sends):
            to, waiting = send.to, plan.held.get(index)
            if waiting:
                to = to - waiting
            targets = [ws for s in to if (ws := connections.get(s)) is not None]
            watchers = [ws for s in waiting if (ws := connections.get(s)) is not None] if waiting else []
            if targets or watchers:
                data = encode(send.message)
                if targets:
                    frames.append((targets, data))
                if watchers:
                    code = getattr(send.message, "room", "")
                    held.append((code, data, watchers, self._window_s(code)))
        ahead = [ws for s in plan.ahead if (ws := connections.get(s)) is not None]
        return frames, (partial(self._hold, held, ahead) if held or ahead else None)

    def _spectators(self, out: Outbox) -> Split | None:
        """Which of a decision's messages wait for spectators' windows (server/fanout.py `split`)."""
        rooms = self.lobby.rooms

        def spectators_of(code: str) -> set[str] | None:
            room = rooms.get(code)
            return room.spectators if room is not None else None

        return split(out.sends, spectators_of, bool(self.fanout.owed))

    def _window_s(self, code: str) -> float:
        """How long a room's spectators' messages wait: `spectator_batch_ms`, or half a tick in a live game (so a
        spectator still gets every tick in a frame of its own, at an even pace)."""
        window_ms = float(self.config.spectator_batch_ms)
        room = self.lobby.rooms.get(code)
        tick_ms = getattr(room.driver, "tick_ms", None) if room is not None else None
        if isinstance(tick_ms, int):
            window_ms = min(window_ms, tick_ms / 2)
        return window_ms / 1000

    def _hold(self, held: list[Held], ahead: list[ServerConnection]) -> Frames:
        """At the flush, once the decision is stored: what waited for its direct recipients goes out ahead of its
        own frames, and its spectators' copies join their rooms' windows."""
        frames: Frames = []
        for ws in ahead:
            if self.fanout.holds(ws):
                frames.extend(self.fanout.take(ws))
        for code, data, watchers, window_s in held:
            self.fanout.add(code, data, watchers, window_s)
        return frames

    def _push_lobby(self) -> None:
        """Send the lobby's watchers every room change since the last push: one frame, encoded once for all.

        What was decided before is flushed first, so a room whose record could not be stored is already gone
        (taken offline) when the push is built: watchers are only shown rooms that are on disk.
        """
        self.outgoing.flush()
        batch = self.lobby.listing.batch(self.lobby.presence.info)
        if batch is not None:
            watchers, update = batch
            targets = [ws for s in watchers if (ws := self.connections.get(s)) is not None]
            if targets:
                self.outgoing.add_frame(targets, encode(update))
        if self.lobby.listing.pending() and not self.closing:
            self.lobby_pushes.poke()

    def _lost(
        self,
        records: list[Record],
        requester: tuple[ServerConnection, str, int | None] | None,
        exc: Exception | None = None,
    ) -> None:
        """A decision's records are not on disk: its rooms stop, and whoever asked for it learns why.

        A name claim that is not on disk is forgotten; the hello that made it was not welcomed, so its connection
        gets `unavailable` and is closed (it may say hello again on a new one). In a cluster, records refused
        because another node claimed their room (`Fenced`) only make this node let the room go.
        """
        if self.node.fenced(records, exc):
            return
        claims = [record for record in records if isinstance(record, NameClaimed)]
        for claim in claims:
            self.lobby.sessions.claim_lost(claim)
        rated = [(r.player, r.pool) for record in records if isinstance(record, GameFinished) for r in record.ratings]
        if rated:
            self._unrate(rated)
        actions = [record for record in records if isinstance(record, Moderated)]
        for action in actions:
            self.lobby.moderation.lost(action)
        roomless = NameClaimed | TournamentSaved | AnalysisSaved | Moderated  # an analysis is made again when asked
        codes = list(dict.fromkeys(record.code for record in records if not isinstance(record, roomless)))
        spare = requester[1] if requester is not None else None
        for code in codes:
            self.deliver(self.lobby.take_offline(code, spare))
        if requester is not None:
            ws, session, request_id = requester
            if claims:
                text = "the server cannot store your name's claim now (its disk is full or read-only); try later"
                self.outgoing.add_frame([ws], encode(Error(code=ErrorCode.UNAVAILABLE, message=text, id=request_id)))
                self.deliver(self.lobby.disconnect(session, self.clock.now()))
                self.connections.pop(session, None)
                self.spawn(self.close_connection(ws, 1000, "name claim not stored"))
                return
            if actions and not codes:
                text = "the server cannot store the audit log now (its disk is full or read-only); nothing was done"
                self.outgoing.add_frame([ws], encode(Error(code=ErrorCode.UNAVAILABLE, message=text, id=request_id)))
                return
            error = Error(code=ErrorCode.UNAVAILABLE, message=UNAVAILABLE_TEXT, id=request_id, room=codes[0])
            self.outgoing.add_frame([ws], encode(error))

    def _moderation_stored(self, actions: list[Moderated], then: Callable[[], Frames] | None) -> Frames:
        """Once an admin's action is stored: a void's ratings are taken from the store again (the void changed them
        there, server/sqlstore.py `_void`) before the admin is told; the other nodes of a cluster learn of the action;
        then what the decision held back."""
        if any(action.action == VOID for action in actions):
            self.reload_ratings()
        for action in actions:
            self.node.moderated(action)
        return then() if then is not None else []

    def reload_ratings(self) -> None:
        """The rating book takes every rating from the store again (an admin voided rated games there)."""
        if self.store is not None:
            self.lobby.ratings.revert(list(self.lobby.ratings.standings), self.store.ratings())

    def _unrate(self, keys: list[tuple[str, str]]) -> None:
        """A rated game's record is not on disk: its players' ratings in memory go back to the stored ones."""
        assert self.store is not None
        try:
            stored = self.store.ratings()
        except StoreError as exc:  # unreadable too: keep the book as it is, and say so
            log.error("could not read the stored ratings back (%s); ratings in memory may run ahead of the disk", exc)
            return
        self.lobby.ratings.revert(keys, stored)

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run a background task, keeping a reference until it finishes."""
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        """Forget a finished background task; a crash in one is a server bug, so log it."""
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    async def _ai_turn(self, turn: AiTurn) -> None:
        """Get an AI's move from the pool, in its fair turn; a crash or a late answer becomes a quick fallback move.

        The time limit (its budget plus AI_GRACE_MS) runs from the moment a worker takes the search, so waiting
        for a worker never turns into a fallback move.
        """
        loop = asyncio.get_running_loop()
        started = loop.time()
        exhibition = self._exhibition(turn.room)
        await self._ai_slot(turn.room, exhibition)
        try:
            if turn.room not in self.lobby.rooms:
                return  # the room closed while its turn waited: no search for nobody
            future = loop.run_in_executor(self._ai_pool(), _run_ai, turn)
            late_ms = AI_GRACE_MS if turn.late_ms is None else turn.late_ms
            text, info = await asyncio.wait_for(future, (turn.budget_ms + late_ms) / 1000)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning(
                "AI for room %s seat %d failed (%s); playing a fallback move", turn.room, turn.seat, type(exc).__name__
            )
            from gamenight.server.ai.play import fallback_move  # only when an AI failed: the loop rarely pays for it

            text, info = fallback_move(turn.game, turn.state, turn.seat), {"fallback": True}
        finally:
            self._ai_release(turn.room, exhibition)
        await self._pace(turn, loop.time() - started)
        self.deliver(self.lobby.ai_moved(turn.room, turn.seat, turn.seq, text, info, self.clock.now()))

    def _exhibition(self, code: str) -> bool:
        """True for a room where only AIs play (nobody's opponent waits for its moves)."""
        room = self.lobby.rooms.get(code)
        return room is not None and all(seat.ai is not None for seat in room.seats)

    async def _ai_slot(self, code: str, exhibition: bool) -> None:
        """Wait for a worker, in the fair queue's order (server/fair_queue.py)."""
        waiter = self.ai_queue.enter(code, exhibition)
        if waiter is None:
            return
        woken = self._ai_wakers[waiter] = asyncio.get_running_loop().create_future()
        try:
            await woken
        except asyncio.CancelledError:
            if self.ai_queue.leave(waiter):
                self._ai_release(code, exhibition)  # granted and cancelled at once: give the worker back
            raise
        finally:
            self._ai_wakers.pop(waiter, None)

    def _ai_release(self, code: str, exhibition: bool) -> None:
        """A search ended: its worker goes to the fairest waiting turn, which is woken."""
        for waiter in self.ai_queue.release(code, exhibition):
            woken = self._ai_wakers.get(waiter)
            if woken is not None and not woken.done():
                woken.set_result(None)
        self.reviews.wake()  # a review position may start if no turn waits

    async def _pace(self, turn: AiTurn, spent_s: float) -> None:
        """Keep all-AI games watchable: wait out the room's `ai_pace_ms` between AI moves."""
        room = self.lobby.rooms.get(turn.room)
        if room is None or room.game.simultaneous:
            return
        pace_ms = room.ai_pace_ms(turn.seat)
        if pace_ms > spent_s * 1000:
            await asyncio.sleep(pace_ms / 1000 - spent_s)

    def _ai_pool(self) -> Executor:
        """The AI worker pool (forkserver: safe beside the event loop's threads; the AI preloaded once)."""
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(FORKSERVER_PRELOAD)
            self._pool = ProcessPoolExecutor(
                self.config.ai_workers, mp_context=context, initializer=_worker_start, initargs=(os.getpid(),)
            )
        return self._pool

    async def _warm_ai(self) -> None:
        """Start the AI workers now, so the first AI move (or Tron tick) does not pay for process start-up."""
        pool = self._ai_pool()
        loop = asyncio.get_running_loop()
        workers = self.config.ai_workers or os.cpu_count() or 1
        try:
            await asyncio.gather(*(loop.run_in_executor(pool, _warm) for _ in range(workers)))
        except Exception:
            log.warning("could not start the AI workers; AI seats will play fallback moves", exc_info=True)

    def _start_clock(self, effect: StartClock) -> None:
        """Start (or restart) the tick clock of a live room."""
        self.timers.start_ticks(effect.room, effect.delay_ms / 1000, effect.tick_ms / 1000)

    def _tick(self, code: str, now: float) -> bool:
        """A live room's tick is due: the room plays it; True while its game goes on ticking."""
        try:
            self.deliver(self.lobby.tick(code, now))
        except Exception:
            log.exception("bug while ticking room %s", code)
            return False
        room = self.lobby.rooms.get(code)
        return room is not None and room.status == "playing"

    def _arm_flag(self, effect: ArmFlag) -> None:
        """Look at a clocked room's flag when its mover's time runs out (replacing the previous look)."""
        self.timers.arm_flag(effect.room, effect.delay_ms / 1000)

    def _flag(self, code: str, now: float) -> None:
        """A flag timer fired: the lobby decides (the game ends on time, or the timer is armed again)."""
        try:
            self.deliver(self.lobby.flag(code, now))
        except Exception:
            log.exception("bug while looking at the flag of room %s", code)

    async def _lag_prober(self) -> None:
        """Ping the players of clocked games now and then; each round trip feeds their lag compensation."""
        while True:
            await asyncio.sleep(self.config.lag_probe_s)
            for session in self.lobby.directory.clocked_sessions():
                ws = self.connections.get(session)
                if ws is not None:
                    self.spawn(self._probe(session, ws))

    async def _probe(self, session: str, ws: ServerConnection) -> None:
        """One ping; its round trip is reported to the lobby (a lost connection or a late pong reports nothing)."""
        try:
            pong = await ws.ping()
            rtt_s = await asyncio.wait_for(pong, max(1.0, self.config.lag_probe_s))
        except (ConnectionClosed, TimeoutError, RuntimeError):
            return
        self.lobby.directory.record_lag(session, rtt_s * 1000)

    async def _sweeper(self) -> None:
        """Periodically close rooms nobody has been in for the grace period, and purge long-closed rooms."""
        purged_at = admins_at = float("-inf")
        while True:
            await asyncio.sleep(SWEEP_INTERVAL_S)
            self.deliver(self.lobby.sweep(self.clock.now()))
            now = time.monotonic()
            if self.store is not None and now - admins_at >= ADMINS_RELOAD_S:
                admins_at = now
                try:
                    self.lobby.moderation.load_admins(self.store.admins())
                except StoreError as exc:
                    log.warning("could not read the admins again: %s", exc)
            for address in [a for a, until in self.penalized.items() if until <= now]:
                del self.penalized[address]
            if self.store is not None and time.monotonic() - purged_at >= PURGE_INTERVAL_S:
                purged_at = time.monotonic()
                try:
                    self.store.purge_closed(time.time() - self.config.closed_room_retention_s)
                    self._expire_claims()
                except Exception as exc:
                    log.warning("could not purge closed rooms or expire unused claims: %s", exc)

    def _expire_claims(self) -> None:
        """Free the names claimed more than `unused_claim_s` ago and never played under (at start-up and hourly)."""
        if self.store is not None and self.config.unused_claim_s:
            expired = self.store.expire_claims(time.time() - self.config.unused_claim_s)
            self.lobby.sessions.claims_expired(expired)
            if expired:
                log.info("%d unused claims expired", len(expired))
