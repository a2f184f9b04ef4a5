"""The web front door (issue 35) in a real browser: Debian's headless chromium, driven by Playwright, plays on a real
`gamenight-server --web` process; what the browser player did is checked over the protocol by an ordinary peer."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from gamenight.protocol.messages import Join, ListGames, ListPlayers, ListRooms
from gamenight.protocol.vocab import Role, RoomStatus
from gamenight.server.games import REGISTRY
from tests.peer import Peer
from tests.procs import HAS_PROC, living
from tests.server.serverproc import NO_ROOM_CAPS
from tests.waiting import eventually

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists() or not HAS_PROC:
    if os.environ.get("CI") == "true":  # CI installs chromium (.ci/run): never skip there
        raise RuntimeError(f"{CHROMIUM} is missing: .ci/run should have installed chromium")
    pytest.skip("Debian's chromium (/usr/bin/chromium) is not installed", allow_module_level=True)
playwright = pytest.importorskip("playwright.async_api", reason="the test extra's playwright is not installed")

pytestmark = pytest.mark.asyncio(loop_scope="module")

VIEWPORT = {"width": 1200, "height": 800}
MOVE_WAIT_S = 5.0  # after a key that should make a move: press again if the move has not come by then


class WebServer:
    """`gamenight-server --web 0` as a child process, its visitors' folders and database in `folder`."""

    def __init__(self, folder: Path, *extra: str) -> None:
        self.folder = folder
        self.extra = extra
        self.proc: subprocess.Popen[str] | None = None
        self.game_url = self.page_url = ""

    def start(self) -> WebServer:
        """Start it and read the two lines naming the game server and the page."""
        command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", str(self.folder / "games.db")]
        command += ["--log-level", "warning", "--ai-workers", "1", *NO_ROOM_CAPS, "--web", "0", *self.extra]
        environment = dict(os.environ, XDG_DATA_HOME=str(self.folder / "data"))
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
        assert self.proc.stdout is not None
        listening, door = self.proc.stdout.readline(), self.proc.stdout.readline()
        assert "listening on" in listening and "friends can open" in door, (listening, door)
        scheme, port = listening.split()[-1].split("://")[0], listening.rsplit(":", 1)[1].strip()
        self.game_url = f"{scheme}://127.0.0.1:{port}"
        scheme, port = door.split()[-1].split("://")[0], door.strip().rstrip("/").rsplit(":", 1)[1]
        self.page_url = f"{scheme}://127.0.0.1:{port}/"
        return self

    def clients(self) -> set[int]:
        """The web client processes it runs now (its children running gamenight.client)."""
        assert self.proc is not None
        return {
            pid
            for pid, (parent, _) in living().items()
            if parent == self.proc.pid and b"gamenight.client" in read_cmdline(pid)
        }

    def stop(self) -> int:
        """SIGTERM (a clean stop, as Ctrl+C) and wait."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)


def read_cmdline(pid: int) -> bytes:
    """A process's command line ("" once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go (kept with pytest's temporary folders)."""
    return tmp_path_factory.mktemp("web-screenshots")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., WebServer]]:
    """Starts web servers (extra flags allowed), each in a folder of its own; any still running is killed after."""
    started: list[WebServer] = []

    def make(*extra: str, folder: Path | None = None) -> WebServer:
        server = WebServer(folder or tmp_path_factory.mktemp("web"), *extra).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    """One headless chromium for the module (a browser is slow to start)."""
    async with playwright.async_playwright() as driver:
        chromium = await driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield chromium
        await chromium.close()


@pytest.fixture(scope="module")
def server(servers: Callable[..., WebServer]) -> WebServer:
    """The web server the playing tests share (the default bounds)."""
    return servers()


ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
"""Terminal control sequences (CSI, OSC, two-byte escapes): what is left of the client's output is its text."""
ROOM_CODE = re.compile(rb"room ([A-Z0-9]{4,8})\b")  # as the game screen's title names its room


class Tab:
    """A browser tab on the page, with what its terminal was sent so far (the client's screen output, read off its
    websocket: the terminal is drawn on a canvas, with no text in the page to read)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.output = bytearray()
        page.on("websocket", lambda socket: socket.on("framereceived", self._received))

    def _received(self, payload: bytes | str) -> None:
        """Keep the client's output (the text frames are the page's own pings and notes)."""
        if isinstance(payload, bytes):
            self.output += payload

    def mark(self) -> int:
        """Where the output is now: `shows` can look only at what comes after."""
        return len(self.output)

    async def shows(self, text: str, since: int = 0) -> None:
        """Wait until the client has written `text` (after `since`)."""

        async def written() -> bool:
            return text.encode() in ANSI.sub(b"", bytes(self.output[since:]))

        await eventually(written, f"{text!r} on the screen")


async def open_tab(browser: Any, url: str, context: Any = None) -> Tab:
    """A new tab (in its own browser context, so its own cookie, unless one is given) on the page, once the client
    has drawn its first screen."""
    context = context or await browser.new_context(viewport=VIEWPORT)
    tab = Tab(await context.new_page())
    await tab.page.goto(url)
    await tab.page.wait_for_function("document.body.classList.contains('-first-byte')", timeout=60_000)
    return tab


async def online(watcher: Peer, name: str) -> bool:
    """Whether `name` is online, as the server's player list says."""
    reply = await watcher.request(ListPlayers)
    return any(player.name == name for player in reply.players)


async def room_of(watcher: Peer, name: str) -> Any:
    """The listed room where `name` has a seat, once there is one."""
    found: list[Any] = []

    async def seated() -> bool:
        reply = await watcher.request(ListRooms)
        found[:] = [room for room in reply.rooms if any(seat.name == name for seat in room.seats)]
        return bool(found)

    await eventually(seated, f"a room with {name} seated")
    return found[0]


async def sign_in(tab: Tab, watcher: Peer, name: str) -> None:
    """Give the first visit's name prompt a name and wait until the server has that player online."""
    await tab.shows("What name should")
    await tab.page.keyboard.type(name)
    await tab.page.keyboard.press("Enter")
    await eventually(lambda: online(watcher, name), f"{name} online")


async def play_until(watcher: Peer, room: str, pages: dict[int, Any], done: Callable[[Any], bool]) -> Any:
    """Press Enter (play the square under the board's cursor, which sits on a legal one on your turn) in the tab
    of whichever seat is to move, until `done(state)`; returns that state. A key pressed before the tab has the
    position is pressed again."""
    state = await watcher.at(room, 0)
    while not done(state):
        movers = [seat for seat in state.to_move if seat in pages]
        if movers:
            await pages[movers[0]].keyboard.press("Enter")
        try:
            state = await asyncio.wait_for(watcher.state_after(room, state.seq), MOVE_WAIT_S if movers else 60)
        except TimeoutError:
            continue
    return state


@pytest_asyncio.fixture(loop_scope="module")
async def watcher(server: WebServer) -> AsyncIterator[Peer]:
    """An ordinary protocol client on the same server, to see what the browser players did."""
    peer = await Peer.connect(server.game_url, "watcher")
    yield peer
    await peer.close()


@pytest.mark.slow  # a whole game against the AI: about 40 s here
async def test_a_browser_player_plays_othello_against_the_ai(browser, server, watcher, artefacts):
    """A friend opens the page, types a name, presses n and plays a whole Othello game against the AI with the
    keyboard alone (the page has the focus from the start); the server records the game as that player's."""
    tab = await open_tab(browser, server.page_url)
    page = tab.page
    assert await page.title() == "gamenight"
    assert await page.evaluate("document.activeElement.classList.contains('xterm-helper-textarea')")
    await sign_in(tab, watcher, "ann")
    await tab.shows("Hello")
    await page.screenshot(path=artefacts / "lobby.png")
    await page.keyboard.press("n")  # the quick menu, Play focused: Enter plays its default (Othello, AI level 3)
    await tab.shows("Play against the AI")
    await page.keyboard.press("Enter")
    room = await room_of(watcher, "ann")
    assert room.game == "othello"
    seat = next(s.seat for s in room.seats if s.name == "ann")
    await watcher.request(Join, room=room.room, role=Role.SPECTATOR)
    await play_until(watcher, room.room, {seat: page}, lambda state: len(state.moves) >= 6)
    await page.screenshot(path=artefacts / "othello.png")
    final = await play_until(watcher, room.room, {seat: page}, lambda state: state.status == RoomStatus.FINISHED)
    assert final.result is not None
    played = (await watcher.request(ListGames, player="ann")).games
    assert [game["game"] for game in played] == ["othello"] and "ann" in str(played[0]["players"])
    await page.screenshot(path=artefacts / "othello-over.png")
    await page.context.close()


async def test_two_friends_in_two_tabs_play_each_other(browser, server, watcher, artefacts):
    """Two friends, each in a browser of their own: one challenges the other from the online list, the other
    accepts with y, both are seated in one room and each one's moves reach the server."""
    amy, bo = await open_tab(browser, server.page_url), await open_tab(browser, server.page_url)
    await sign_in(amy, watcher, "amy")
    await sign_in(bo, watcher, "bo")
    await bo.shows("amy")  # bo's online list has amy (listed first: by name)
    await bo.page.keyboard.press("Tab")
    mark = bo.mark()
    await bo.page.keyboard.press("p")
    await bo.shows("Challenge amy", since=mark)
    await bo.page.keyboard.press("Control+s")
    await amy.shows("It expires in")
    mark = amy.mark()
    await amy.page.keyboard.press("y")
    await amy.shows("sits down", since=mark)  # the game screen of the challenge's room (private: not listed)
    code = ROOM_CODE.findall(ANSI.sub(b"", bytes(amy.output[mark:])))[-1].decode()
    joined = await watcher.request(Join, room=code, role=Role.SPECTATOR)
    assert joined.type == "joined"
    info = await watcher.expect("room", room=code)
    seats = {seat.name: seat.seat for seat in info.seats}
    assert set(seats) == {"amy", "bo"}
    pages = {seats["amy"]: amy.page, seats["bo"]: bo.page}
    await play_until(watcher, code, pages, lambda state: len(state.moves) >= 4)
    await amy.page.screenshot(path=artefacts / "friends-amy.png")
    moved = [m for m in watcher.seen if m.type == "moved" and m.room == code]
    assert {m.seat for m in moved} == set(pages)
    await amy.page.context.close()
    await bo.page.context.close()


async def test_a_full_table_says_so_and_an_idle_session_ends(browser, servers, artefacts):
    """Past the cap of sessions a friend gets a page saying the table is full (no client starts); a session where
    nothing is pressed for --web-idle ends, its client process with it, and the page says why."""
    server = servers("--web-sessions", "1", "--web-idle", "3")
    first = await open_tab(browser, server.page_url)
    assert len(server.clients()) == 1
    context = await browser.new_context(viewport=VIEWPORT)
    refused = await context.new_page()
    answer = await refused.goto(server.page_url)
    assert answer.status == 503
    assert "The host's web table is full: 1 browser session at a time." in await refused.inner_text("body")
    await refused.screenshot(path=artefacts / "full.png")
    await first.page.wait_for_function("document.querySelector('#notice').classList.contains('-shown')")
    assert "no key was pressed" in await first.page.inner_text("#notice")
    await first.page.screenshot(path=artefacts / "idle.png")

    async def ended() -> bool:
        return not server.clients()

    await eventually(ended, "the idle client process ended")
    answer = await refused.goto(server.page_url)
    assert answer.status == 200  # the seat is free again
    await first.page.context.close()
    server.stop()

    server = servers("--web-per-address", "1")  # one address (this machine's) at its own cap
    first = await open_tab(browser, server.page_url)
    answer = await refused.goto(server.page_url)
    assert answer.status == 503
    assert "Your address has 1 gamenight tab open already" in await refused.inner_text("body")
    await context.close()
    await first.page.context.close()
    server.stop()


async def test_the_cookie_brings_the_same_player_back_and_shutdown_leaves_no_client(browser, servers):
    """The clients run niced below the server and end with it (none is left behind by a clean stop); a friend who
    comes back with the same browser, even after a restart, is the same player: no name asked, the same claimed
    name (another browser gets the name prompt)."""
    server = servers()
    folder = server.folder
    context = await browser.new_context(viewport=VIEWPORT)
    tab = await open_tab(browser, server.page_url, context)
    watcher = await Peer.connect(server.game_url, "watcher")
    await sign_in(tab, watcher, "cora")
    await watcher.close()
    (client,) = server.clients()
    assert server.proc is not None
    assert os.getpriority(os.PRIO_PROCESS, client) > os.getpriority(os.PRIO_PROCESS, server.proc.pid)
    assert server.stop() == 0
    assert not Path(f"/proc/{client}").exists() or client not in living(), "a web client outlived the server"
    await tab.page.wait_for_function("document.querySelector('#notice').classList.contains('-shown')")
    assert "reconnecting" in await tab.page.inner_text("#notice")

    server = servers(folder=folder)  # the same data folder (its visitors) and database: a restart
    watcher = await Peer.connect(server.game_url, "watcher")
    again = await open_tab(browser, server.page_url, context)
    await eventually(lambda: online(watcher, "cora"), "cora back without being asked her name")
    assert b"What name should" not in ANSI.sub(b"", bytes(again.output))
    stranger = await open_tab(browser, server.page_url)
    await stranger.shows("What name should")
    await watcher.close()
    await context.close()
    await stranger.page.context.close()
    server.stop()


async def test_a_killed_server_leaves_no_client(browser, servers):
    """A server that dies without cleaning up (SIGKILL, a crash) takes its web clients with it: none is left
    running on the host."""
    server = servers()
    tab = await open_tab(browser, server.page_url)
    (client,) = server.clients()
    assert server.proc is not None
    server.proc.kill()
    server.proc.wait()

    async def gone() -> bool:
        return client not in living()

    await eventually(gone, "the web client ended with its server")
    await tab.page.context.close()


@pytest.mark.slow  # tests/server/test_tls.py checks the loopback listener quickly
async def test_with_a_certificate_the_page_is_https_and_its_clients_play(browser, servers, tmp_path):
    """With --certfile/--keyfile the page is served over https:// (and the game over wss://), and a friend's
    browser client still reaches the game (over the server's plain listener on 127.0.0.1)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    server = servers("--certfile", str(cert), "--keyfile", str(key))
    assert server.page_url.startswith("https://") and server.game_url.startswith("wss://")
    context = await browser.new_context(viewport=VIEWPORT, ignore_https_errors=True)
    tab = await open_tab(browser, server.page_url, context)
    await tab.shows("What name should")
    await tab.page.keyboard.type("dee")
    mark = tab.mark()
    await tab.page.keyboard.press("Enter")
    await tab.shows("connected to ws://127.0.0.1", since=mark)  # its header, once the server welcomed it
    await tab.shows("Hello dee", since=mark)
    await context.close()
    server.stop()


async def test_the_arrows_move_and_a_reloaded_page_puts_the_player_back_in_the_game(browser, server, watcher):
    """The arrow keys reach the board (the cursor goes to another legal square, Enter plays it there); a page that
    starts again (a reload, or the reconnect after a lost connection) is the same player's client with its resume
    token: it opens the unfinished game again, as the terminal client does."""
    tab = await open_tab(browser, server.page_url)
    await sign_in(tab, watcher, "eve")
    await tab.page.keyboard.press("n")
    await tab.shows("Play against the AI")
    await tab.page.keyboard.press("Enter")
    room = await room_of(watcher, "eve")
    await tab.shows("Your move")
    await watcher.request(Join, room=room.room, role=Role.SPECTATOR)
    state = await watcher.at(room.room, 0)
    assert state.moves == []  # the opening position, where the player (black) moves first
    rules = REGISTRY["othello"].rules
    legal = rules.legal_notation(rules.initial_state({"size": room.options.get("size", 8)}), 0)
    start, target = legal[0], legal[-1]  # the cursor sits on the first legal square on your turn
    rows, cols = int(target[1:]) - int(start[1:]), ord(target[0]) - ord(start[0])
    for key in ["ArrowDown"] * rows + ["ArrowUp"] * -rows + ["ArrowRight"] * cols + ["ArrowLeft"] * -cols:
        await tab.page.keyboard.press(key)
    await tab.page.keyboard.press("Enter")
    assert (await watcher.state_after(room.room, state.seq)).moves[0] == target
    mark = tab.mark()
    await tab.page.reload()
    await tab.shows(f"Welcome back: you are in room {room.room} again", since=mark)
    assert b"What name should" not in ANSI.sub(b"", bytes(tab.output[mark:]))
    await tab.page.context.close()
