"""The network layer: websockets connections in, lobby decisions out, and the tasks time needs.

Everything that decides anything lives in `Lobby` / `Room`. This module only decodes frames, hands
them over, and carries out the returned `Outbox`: it encodes each message once and broadcasts the
bytes to its recipients, runs AI searches in a process pool (never on the event loop), and keeps one
tick clock per live game.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol import MAX_FRAME, ErrorCode, ProtocolError, decode, encode
from protocol.messages import Error, Hello, Message
from server.lobby import Lobby
from server.room import AiTurn, Outbox, Refusal, StartClock

log = logging.getLogger("gamenight.server")

SWEEP_INTERVAL_S = 5.0
AI_GRACE_MS = 2000  # an AI answer later than its budget plus this is abandoned for a fallback move


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """How a server runs: where it listens and how much it may use."""

    host: str = "127.0.0.1"
    port: int = 8765
    ai_workers: int | None = None
    ping_interval: float | None = 20.0


def _run_ai(turn: AiTurn) -> tuple[str, dict[str, Any]]:
    """In a worker process: ask the AI of `turn` for its move (imported here so the loop never searches)."""
    from server.ai.play import choose_move

    return choose_move(turn.game, turn.state, turn.seat, level=turn.ai.level, bot=turn.ai.bot,
                       budget_ms=turn.budget_ms)


class GameServer:
    """Owns the lobby, the open connections, the AI pool and the clocks of one running server."""

    def __init__(self, config: ServerConfig, lobby: Lobby | None = None) -> None:
        self.config = config
        self.lobby = lobby or Lobby(ai_bots=_known_bots())
        self.connections: dict[str, ServerConnection] = {}
        self.clocks: dict[str, asyncio.Task[None]] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self._pool: Executor | None = None
        self._server: Server | None = None

    # -- lifecycle ----------------------------------------------------------------------------------
    async def start(self) -> Server:
        """Start listening; returns the websockets server (its sockets tell the bound port)."""
        self._server = await serve(
            self.handler, self.config.host, self.config.port,
            process_request=self._http, max_size=MAX_FRAME, compression=None,
            ping_interval=self.config.ping_interval, ping_timeout=self.config.ping_interval,
        )
        self._spawn(self._sweeper())
        return self._server

    @property
    def port(self) -> int:
        """The port actually bound (useful when asked for port 0)."""
        assert self._server is not None
        return self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Close every connection cleanly (close frames sent), stop clocks and the AI pool."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self.tasks) + list(self.clocks.values()):
            task.cancel()
        await asyncio.gather(*self.tasks, *self.clocks.values(), return_exceptions=True)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Answer plain HTTP health checks on the websocket port; let upgrades through."""
        if request.path == "/healthz":
            return connection.respond(HTTPStatus.OK, "ok\n")
        return None

    # -- connections -----------------------------------------------------------------------------------
    async def handler(self, ws: ServerConnection) -> None:
        """One connection: hello first, then requests until it closes; cleanup always runs."""
        session: str | None = None
        try:
            async for frame in ws:
                session = self._receive(ws, session, frame)
        except ConnectionClosed:
            pass
        finally:
            if session is not None:
                self.connections.pop(session, None)
                self.deliver(self.lobby.disconnect(session, time.monotonic()))

    def _receive(self, ws: ServerConnection, session: str | None, frame: Any) -> str | None:
        """Handle one frame; returns the connection's session (set by a successful hello)."""
        try:
            msg = decode(frame)
        except ProtocolError as exc:
            self._reply_error(ws, ErrorCode.BAD_MESSAGE, str(exc), exc.request_id)
            return session
        try:
            if session is None:
                return self._hello(ws, msg)
            self.deliver(self.lobby.handle(session, msg, time.monotonic()))
        except Exception:
            log.exception("bug while handling %s", msg.type)
            self._reply_error(ws, ErrorCode.INTERNAL_ERROR, "the server hit a bug; it has been logged", msg.id)
        return session

    def _hello(self, ws: ServerConnection, msg: Message) -> str | None:
        """The first message must be hello; on success the connection gets its session."""
        if not isinstance(msg, Hello):
            self._reply_error(ws, ErrorCode.NOT_READY, "send hello first", msg.id)
            return None
        try:
            client, out = self.lobby.hello(msg)
        except Refusal as refusal:
            self._reply_error(ws, refusal.code, refusal.message, msg.id)
            return None
        self.connections[client.session] = ws
        log.info("hello from %s (session %s)", client.name, client.session)
        self.deliver(out)
        return client.session

    def _reply_error(self, ws: ServerConnection, code: ErrorCode, text: str, request_id: int | None) -> None:
        """Send an error to one connection without waiting (a closed one is skipped)."""
        broadcast([ws], encode(Error(code=code, message=text, id=request_id)))

    # -- carrying out decisions ---------------------------------------------------------------------------
    def deliver(self, out: Outbox) -> None:
        """Send every queued message (encoded once per message) and start every effect."""
        for send in out.sends:
            targets = [ws for s in send.to if (ws := self.connections.get(s)) is not None]
            if targets:
                broadcast(targets, encode(send.message))
        for effect in out.effects:
            if isinstance(effect, AiTurn):
                self._spawn(self._ai_turn(effect))
            elif isinstance(effect, StartClock):
                self._start_clock(effect)

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run a background task, keeping a reference until it finishes."""
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _ai_turn(self, turn: AiTurn) -> None:
        """Get an AI's move from the pool; a crash or a late answer becomes a quick fallback move."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            future = loop.run_in_executor(self._ai_pool(), _run_ai, turn)
            text, info = await asyncio.wait_for(future, (turn.budget_ms + AI_GRACE_MS) / 1000)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("AI for room %s seat %d failed (%s); playing a fallback move",
                        turn.room, turn.seat, type(exc).__name__)
            from server.ai.play import fallback_move

            text, info = fallback_move(turn.game, turn.state, turn.seat), {"fallback": True}
        await self._pace(turn, loop.time() - started)
        self.deliver(self.lobby.ai_moved(turn.room, turn.seat, turn.seq, text, info, time.monotonic()))

    async def _pace(self, turn: AiTurn, spent_s: float) -> None:
        """Keep all-AI games watchable: wait out the room's `ai_pace_ms` between AI moves."""
        room = self.lobby.rooms.get(turn.room)
        if room is None or room.game.simultaneous:
            return
        pace_ms = room.ai_pace_ms()
        if pace_ms > spent_s * 1000:
            await asyncio.sleep(pace_ms / 1000 - spent_s)

    def _ai_pool(self) -> Executor:
        """The AI worker pool, created on first use (forkserver: safe beside the event loop's threads)."""
        if self._pool is None:
            import multiprocessing

            self._pool = ProcessPoolExecutor(self.config.ai_workers,
                                             mp_context=multiprocessing.get_context("forkserver"))
        return self._pool

    def _start_clock(self, effect: StartClock) -> None:
        """Start (or restart) the tick clock of a live room."""
        old = self.clocks.pop(effect.room, None)
        if old is not None:
            old.cancel()
        self.clocks[effect.room] = asyncio.get_running_loop().create_task(self._clock(effect))

    async def _clock(self, effect: StartClock) -> None:
        """Tick a live game on schedule: tick k fires at start + k*tick, so slow ticks do not drift."""
        loop = asyncio.get_running_loop()
        start = loop.time() + effect.delay_ms / 1000
        k = 0
        try:
            while True:
                await asyncio.sleep(max(0.0, start + k * effect.tick_ms / 1000 - loop.time()))
                self.deliver(self.lobby.tick(effect.room, time.monotonic()))
                room = self.lobby.rooms.get(effect.room)
                if room is None or room.status != "playing":
                    return
                k += 1
        finally:
            if self.clocks.get(effect.room) is asyncio.current_task():
                del self.clocks[effect.room]

    async def _sweeper(self) -> None:
        """Periodically close rooms nobody has been in for the grace period."""
        while True:
            await asyncio.sleep(SWEEP_INTERVAL_S)
            self.deliver(self.lobby.sweep(time.monotonic()))


def _known_bots() -> frozenset[str]:
    """Names of the classic bots the AI package offers (empty if it is not installed)."""
    try:
        from server.ai.play import bots
    except ImportError:
        return frozenset()
    return frozenset(bots())
