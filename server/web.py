"""The web front door (issue 35): `gamenight-server --web PORT` serves the gamenight client in a browser.

Each browser tab gets its own client process on this host, the ordinary `python -m gamenight.client URL` already
pointed at this server, run by textual-serve's web driver (the terminal is drawn by xterm.js in the page). The
server never imports the client nor textual: the client is a child process, and this module (with aiohttp and
textual-serve, the `web` extra) is imported only when `--web` is given.

Who a visitor is: a random HttpOnly cookie names a folder of its own under `WebConfig.visitors` (0700), handed to
its client processes as their config folder (GAMENIGHT_CONFIG_DIR: the name, the key claiming it, the resume
tokens), so a friend who comes back with the same browser is the same player. docs/security.md says what this
gives the host.

Bounds, since each tab is a process here: at most `max_sessions` at once and `max_per_address` from one address
(a page saying so past either), a session whose visitor sent nothing for `idle_timeout_s` is ended, the command is
fixed (no part of a request reaches it), the clients run niced below the server, and `FrontDoor.stop` ends them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hashlib
import html
import logging
import os
import re
import secrets
import signal
import socket
import ssl
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import WSCloseCode, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

log = logging.getLogger("gamenight.server.web")

COOKIE = "gamenight_visitor"
COOKIE_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)
COOKIE_MAX_AGE_S = 365 * 24 * 3600
CLOSE_FULL = 4001  # websocket close codes the page explains (server/web_page.html)
CLOSE_IDLE = 4002
CLOSE_NO_VISITOR = 4003
QUIT_GRACE_S = 5.0  # how long a client asked to quit may take before it is killed
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends
PAGE = Path(__file__).with_name("web_page.html")
WILDCARDS = ("", "0.0.0.0", "::")


@dataclass(frozen=True, slots=True)
class WebConfig:
    """How the front door runs (`gamenight-server --web PORT ...`)."""

    port: int
    visitors: Path  # one folder per visitor (its cookie's hash), each the config folder of its clients
    host: str = "127.0.0.1"
    max_sessions: int = 16  # client processes at once
    max_per_address: int = 3  # ... for one browser address
    idle_timeout_s: float = 900.0  # a session whose visitor sends nothing this long is ended (its process too)
    nice: int = 10  # how far below the server the clients run
    certfile: str | None = None  # with keyfile: https://
    keyfile: str | None = None
    title: str = "gamenight"


def client_url(host: str, port: int, tls: bool, loopback_port: int | None) -> str:
    """The game server's URL as the clients on this host reach it: its own port when it listens on loopback in
    plain ws://, otherwise the plain loopback listener (`ServerConfig.loopback`) a certificate for a public name
    or a single non-loopback address would not serve."""
    if loopback_port is not None:
        return f"ws://127.0.0.1:{loopback_port}"
    assert not tls and reaches_loopback(host)
    return f"ws://127.0.0.1:{port}"


def reaches_loopback(host: str) -> bool:
    """Whether a server bound to `host` is reached on 127.0.0.1."""
    return host in WILDCARDS or host in ("127.0.0.1", "localhost")


def client_command(url: str) -> list[str]:
    """The one command a browser tab runs: this Python's client against this server (nothing from the request)."""
    return [sys.executable, "-m", "gamenight.client", url]


def visitor_folder(visitors: Path, cookie: str) -> Path:
    """The visitor's config folder, made 0700 (its parent too) if new; named by the cookie's hash, so a listing of
    the folders does not give the cookies away."""
    visitors.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = visitors / hashlib.sha256(cookie.encode()).hexdigest()[:32]
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)  # whatever the umask
    return folder


def die_with(server: int) -> Callable[[], None] | None:
    """What a client runs before it starts (Linux): be killed when the server's process ends, however it ends (a
    crashed or SIGKILLed server would otherwise leave its clients running, their screens going nowhere; the web
    driver does not end by itself when its input closes). None elsewhere."""
    if sys.platform != "linux":
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != server:  # the server ended before the line above
            os._exit(1)

    return arm


class ClientSession(AppService):
    """One browser tab's client process: the fixed command, the visitor's config folder, niced, and ended for
    sure (killed if it does not quit)."""

    def __init__(self, door: FrontDoor, address: str, folder: Path, **options: Any) -> None:
        super().__init__(" ".join(door.argv), **options)
        self.door = door
        self.address = address
        self.folder = folder
        self.last_input = time.monotonic()
        self.pid: int | None = None
        self._stopping: asyncio.Future[None] | None = None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        """textual-serve's (the web driver, the size) with the visitor's config folder."""
        environment = super()._build_environment(width, height)
        environment["GAMENIGHT_CONFIG_DIR"] = str(self.folder)
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        """Start the client: no shell, the argv fixed at start-up, its own session (a Ctrl+C at the host's
        terminal reaches the server, which ends it), below the server's priority."""
        self._process = process = await asyncio.create_subprocess_exec(
            *self.door.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width, height),
            start_new_session=True,
            preexec_fn=die_with(os.getpid()),
        )
        self.pid = process.pid
        with contextlib.suppress(OSError):  # it may have ended already
            os.setpriority(os.PRIO_PROCESS, process.pid, os.getpriority(os.PRIO_PROCESS, 0) + self.door.config.nice)
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def send_bytes(self, data: bytes) -> bool:
        """Pass the visitor's keys and mouse on; each counts as activity for the idle timeout."""
        self.last_input = time.monotonic()
        return await super().send_bytes(data)

    async def run(self) -> None:
        """Relay the client's screen until it ends, then close the tab's websocket (a client that crashed, too,
        ends its session: the page says so rather than showing a dead screen)."""
        await super().run()
        await self.remote_close()

    async def stop(self) -> None:
        """Ask the client to quit, kill it if it has not after QUIT_GRACE_S, and reap it; every caller (the tab's
        handler, the front door's shutdown) returns once the process is gone."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._end())
        await asyncio.shield(self._stopping)

    async def _end(self) -> None:
        """`stop`, done once."""
        task, process = self._task, self._process
        if task is None or process is None:
            return
        with contextlib.suppress(Exception):  # a client that ended already has no standard input left
            await self.send_meta({"type": "quit"})
        try:
            await asyncio.wait_for(asyncio.shield(task), QUIT_GRACE_S)
        except TimeoutError:
            log.warning("web client %s did not quit; killing it", process.pid)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await task
        await process.wait()


class FrontDoor(Server):
    """textual-serve's server with gamenight's page, visitors, bounds and lifecycle, run on the game server's event
    loop (`start`/`stop`, not textual-serve's `serve`, which owns its loop)."""

    def __init__(self, config: WebConfig, game_url: str) -> None:
        scheme = "https" if config.certfile else "http"
        super().__init__(" ".join(client_command(game_url)), config.host, config.port, title=config.title)
        self.config = config
        self.argv = client_command(game_url)
        self.scheme = scheme
        self.sessions: dict[ClientSession, web.WebSocketResponse] = {}
        self.page = PAGE.read_text(encoding="utf-8")
        self._runner: web.AppRunner | None = None
        self._watch: asyncio.Task[None] | None = None
        self.bound_port = 0

    # -- lifecycle ----------------------------------------------------------------------------------
    async def start(self) -> None:
        """Listen (over TLS with a certificate) and start the idle watch."""
        self._runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.config.host, self.config.port, ssl_context=self._tls())
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.base_events.Server)
        self.bound_port = int(server.sockets[0].getsockname()[1])
        self._watch = asyncio.create_task(self._watch_idle())

    async def stop(self) -> None:
        """End every session (its page is told the server is going away) and its process, then stop listening."""
        if self._watch is not None:
            self._watch.cancel()
        for websocket in list(self.sessions.values()):
            await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"the server is stopping")
        await asyncio.gather(*(session.stop() for session in list(self.sessions)), return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def url(self) -> str:
        """What the host tells friends to open: this machine's name when bound to every address."""
        host = socket.gethostname() if self.config.host in WILDCARDS else self.config.host
        return f"{self.scheme}://{host}:{self.bound_port}/"

    def _tls(self) -> ssl.SSLContext | None:
        """The TLS context with a certificate (the same as the game server's), else None."""
        if not self.config.certfile:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.config.certfile, self.config.keyfile)
        return context

    async def _make_app(self) -> web.Application:
        """The page, its websocket and textual-serve's scripts and fonts; nothing else (no downloads)."""
        app = web.Application()
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                web.static("/static", self.statics_path, name="static"),
            ]
        )
        return app

    async def _watch_idle(self) -> None:
        """End the sessions whose visitor has sent nothing for `idle_timeout_s`."""
        timeout = self.config.idle_timeout_s
        while True:
            await asyncio.sleep(min(5.0, timeout / 4))
            now = time.monotonic()
            for session, websocket in list(self.sessions.items()):
                if now - session.last_input > timeout:
                    log.info("web session of %s idle; ending it", session.address)
                    await websocket.close(code=CLOSE_IDLE, message=b"idle")

    # -- requests -----------------------------------------------------------------------------------
    def refused_why(self, address: str) -> str | None:
        """Why a new session from `address` cannot start now, or None."""
        if len(self.sessions) >= self.config.max_sessions:
            cap = self.config.max_sessions
            return f"The host's web table is full: {cap} browser session{'s' if cap > 1 else ''} at a time."
        if sum(session.address == address for session in self.sessions) >= self.config.max_per_address:
            cap = self.config.max_per_address
            return f"Your address has {cap} gamenight tab{'s' if cap > 1 else ''} open already, the most it may have."
        return None

    async def handle_index(self, request: web.Request) -> web.Response:
        """The page (its visitor cookie set or renewed), or a page saying why no session can start now."""
        address = request.remote or "?"
        if (why := self.refused_why(address)) is not None:
            return web.Response(status=503, text=full_page(self.config.title, why), content_type="text/html")
        cookie = request.cookies.get(COOKIE, "")
        if not COOKIE_PATTERN.fullmatch(cookie):
            cookie = secrets.token_urlsafe(32)
        page = self.page.replace("{{title}}", html.escape(self.config.title))
        response = web.Response(text=page, content_type="text/html")
        response.headers["Cache-Control"] = "no-store"
        response.set_cookie(
            COOKIE,
            cookie,
            max_age=COOKIE_MAX_AGE_S,
            httponly=True,
            samesite="Strict",
            secure=self.scheme == "https",
        )
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One tab's session: refused (a close code the page explains) without the visitor's cookie, from another
        site, or past a cap; otherwise the client process, fed the tab's keys until either side ends."""
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        address = request.remote or "?"
        cookie = request.cookies.get(COOKIE, "")
        origin = request.headers.get("Origin")
        if not COOKIE_PATTERN.fullmatch(cookie) or (
            origin is not None and origin != f"{request.scheme}://{request.host}"
        ):
            await websocket.close(code=CLOSE_NO_VISITOR, message=b"open the page first")
            return websocket
        if (why := self.refused_why(address)) is not None:
            await websocket.close(code=CLOSE_FULL, message=why.encode()[:120])
            return websocket
        width = clamp(request.query.get("width"), 80, 20, 500)
        height = clamp(request.query.get("height"), 24, 10, 200)
        session = ClientSession(
            self,
            address,
            await asyncio.to_thread(visitor_folder, self.config.visitors, cookie),
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        self.sessions[session] = websocket
        try:
            await session.start(width, height)
            await self._process_messages(websocket, session)
        except Exception:
            log.exception("web session of %s failed", address)
        finally:
            del self.sessions[session]
            await session.stop()
            await websocket.close()
        return websocket


def clamp(text: str | None, default: int, low: int, high: int) -> int:
    """A terminal size from the page's query string, as a number within bounds."""
    try:
        return min(high, max(low, int(text or default)))
    except ValueError:
        return default


def full_page(title: str, why: str) -> str:
    """The page shown instead of the game when no session can start now."""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}: full</title>'
        "<style>body{background:#0c181f;color:#eee;font-family:monospace;text-align:center;padding-top:20vh}</style>"
        f"</head><body><h1>{html.escape(title)}</h1><p>{html.escape(why)}</p>"
        "<p>Try again in a few minutes: this page does not reload by itself.</p></body></html>"
    )
