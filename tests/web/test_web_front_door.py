"""The web front door (issue 35) in a real browser: Debian's headless chromium, driven by Playwright, plays on a real
`gamenight-server --web` process; what the browser player did is checked over the protocol by an ordinary peer."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from gamenight.protocol.messages import CreateRoom, Join
from gamenight.protocol.vocab import Role, RoomStatus
from gamenight.server.games import REGISTRY
from gamenight.server.games.tron import EAST, NORTH, SOUTH, WEST
from tests.peer import Peer
from tests.procs import HAS_PROC, living
from tests.waiting import eventually
from tests.web.door import (
    ROOM_CODE,
    Tab,
    games_of,
    online,
    othello_legal,
    othello_square_cell,
    play_until,
    sign_in,
    start_ai_game,
)

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists() or not HAS_PROC:
    if os.environ.get("CI") == "true":  # CI installs chromium (.ci/run): never skip there
        raise RuntimeError(f"{CHROMIUM} is missing: .ci/run should have installed chromium")
    pytest.skip("Debian's chromium (/usr/bin/chromium) is not installed", allow_module_level=True)
playwright = pytest.importorskip("playwright.async_api", reason="the test extra's playwright is not installed")

pytestmark = pytest.mark.asyncio(loop_scope="module")

VIEWPORT = {"width": 1200, "height": 800}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    """One headless chromium for the module (a browser is slow to start)."""
    async with playwright.async_playwright() as driver:
        chromium = await driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield chromium
        await chromium.close()


class ChromiumTab(Tab):
    """A chromium tab (Playwright's page) on the page; the client's output is read off its websocket."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.received = bytearray()
        self.frames_sent: list[str] = []
        page.on("websocket", self._watch)

    def _watch(self, socket: Any) -> None:
        """Keep the client's output (the text frames it receives are the page's own pings and notes) and the text
        frames the page sends (its size, its keys)."""
        self.frames_sent.append(socket.url)
        socket.on("framereceived", lambda payload: isinstance(payload, bytes) and self.received.extend(payload))
        socket.on("framesent", lambda payload: isinstance(payload, str) and self.frames_sent.append(payload))

    async def output(self) -> bytes:
        """What the client has written so far."""
        return bytes(self.received)

    async def sent(self) -> list[str]:
        """The websocket's URL and the text frames the page sent."""
        return list(self.frames_sent)

    async def click(self, x: float, y: float) -> None:
        """A left click."""
        await self.page.mouse.click(x, y)

    async def press(self, key: str) -> None:
        """Press and release a key."""
        await self.page.keyboard.press(key)

    async def type(self, text: str) -> None:
        """Type a text."""
        await self.page.keyboard.type(text)

    async def evaluate(self, expression: str) -> Any:
        """A JavaScript expression's value in the page."""
        return await self.page.evaluate(expression)

    async def screenshot(self, path: Path) -> None:
        """Save a PNG of the viewport."""
        await self.page.screenshot(path=path)


async def open_tab(browser: Any, url: str, context: Any = None) -> ChromiumTab:
    """A new tab (in its own browser context, so its own cookie, unless one is given) on the page, once the client
    has drawn its first screen."""
    context = context or await browser.new_context(viewport=VIEWPORT)
    tab = ChromiumTab(await context.new_page())
    await tab.page.goto(url)
    await tab.page.wait_for_function("document.body.classList.contains('-first-byte')", timeout=60_000)
    return tab


@pytest.mark.slow  # a whole game against the AI: about 40 s here
async def test_a_browser_player_plays_othello_against_the_ai(browser, server, watcher, artefacts):
    """A friend opens the page, types a name, presses n and plays a whole Othello game against the AI with the
    keyboard alone (the page has the focus from the start); the server records the game as that player's."""
    tab = await open_tab(browser, server.page_url)
    room, seat = await start_ai_game(tab, watcher, "ann", artefacts / "lobby.png")
    await play_until(watcher, room.room, {seat: tab}, lambda state: len(state.moves) >= 6)
    await tab.screenshot(artefacts / "othello.png")
    final = await play_until(watcher, room.room, {seat: tab}, lambda state: state.status == RoomStatus.FINISHED)
    assert final.result is not None
    played = await games_of(watcher, "ann")
    assert [game["game"] for game in played] == ["othello"] and "ann" in str(played[0]["players"])
    await tab.screenshot(artefacts / "othello-over.png")
    await tab.page.context.close()


async def test_two_friends_in_two_tabs_play_each_other(browser, server, watcher, artefacts):
    """Two friends, each in a browser of their own: one challenges the other from the online list, the other
    accepts with y, both are seated in one room and each one's moves reach the server."""
    amy, bo = await open_tab(browser, server.page_url), await open_tab(browser, server.page_url)
    await sign_in(amy, watcher, "amy")
    await sign_in(bo, watcher, "bo")
    await bo.shows("amy")  # bo's online list has amy (listed first: by name)
    await bo.press("Tab")
    mark = await bo.mark()
    await bo.press("p")
    await bo.shows("Challenge amy", since=mark)
    await bo.press("Control+s")
    await amy.shows("It expires in")
    mark = await amy.mark()
    await amy.press("y")
    await amy.shows("sits down", since=mark)  # the game screen of the challenge's room (private: not listed)
    code = ROOM_CODE.findall(await amy.text(mark))[-1].decode()
    joined = await watcher.request(Join, room=code, role=Role.SPECTATOR)
    assert joined.type == "joined"
    info = await watcher.expect("room", room=code)
    seats = {seat.name: seat.seat for seat in info.seats}
    assert set(seats) == {"amy", "bo"}
    tabs: dict[int, Tab] = {seats["amy"]: amy, seats["bo"]: bo}
    await play_until(watcher, code, tabs, lambda state: len(state.moves) >= 4)
    await amy.screenshot(artefacts / "friends-amy.png")
    moved = [m for m in watcher.seen if m.type == "moved" and m.room == code]
    assert {m.seat for m in moved} == set(tabs)
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
    assert b"What name should" not in await again.text()
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
    await tab.type("dee")
    mark = await tab.mark()
    await tab.press("Enter")
    await tab.shows("connected to ws://127.0.0.1", since=mark)  # its header, once the server welcomed it
    await tab.shows("Hello dee", since=mark)
    await context.close()
    server.stop()


async def test_the_arrows_move_and_a_reloaded_page_puts_the_player_back_in_the_game(browser, server, watcher):
    """The arrow keys reach the board (the cursor goes to another legal square, Enter plays it there); a page that
    starts again (a reload, or the reconnect after a lost connection) is the same player's client with its resume
    token: it opens the unfinished game again, as the terminal client does."""
    tab = await open_tab(browser, server.page_url)
    room, _ = await start_ai_game(tab, watcher, "eve")
    await tab.shows("Your move")
    state = await watcher.at(room.room, 0)
    assert state.moves == []  # the opening position, where the player (black) moves first
    rules = REGISTRY["othello"].rules
    legal = rules.legal_notation(rules.initial_state({"size": room.options.get("size", 8)}), 0)
    start, target = legal[0], legal[-1]  # the cursor sits on the first legal square on your turn
    rows, cols = int(target[1:]) - int(start[1:]), ord(target[0]) - ord(start[0])
    for key in ["ArrowDown"] * rows + ["ArrowUp"] * -rows + ["ArrowRight"] * cols + ["ArrowLeft"] * -cols:
        await tab.press(key)
    await tab.press("Enter")
    assert (await watcher.state_after(room.room, state.seq)).moves[0] == target
    mark = await tab.mark()
    await tab.page.reload()
    await tab.shows(f"Welcome back: you are in room {room.room} again", since=mark)
    assert b"What name should" not in await tab.text(mark)
    await tab.page.context.close()


async def test_a_click_plays_a_square_and_a_resized_page_is_laid_out_again(browser, server, watcher, artefacts):
    """A click on an Othello square plays it; a smaller window re-lays the client at the terminal's new size (the
    page tells the client its new columns and rows, the board is drawn again to fit) and a click there plays the
    square under the pointer."""
    tab = await open_tab(browser, server.page_url)
    room, seat = await start_ai_game(tab, watcher, "gus")
    await tab.shows("Your move")
    state = await watcher.at(room.room, 0)
    target = othello_legal(room, state, seat)[-1]  # not the cursor's square (the first legal one): the click's
    await tab.click_square(target)
    state = await watcher.state_after(room.room, state.seq)
    assert state.moves == [target]
    while seat not in state.to_move:  # the AI answers
        state = await watcher.state_after(room.room, state.seq)
    await tab.on_screen("Your move")
    target = othello_legal(room, state, seat)[-1]
    cols, rows = await tab.terminal_size()
    before = othello_square_cell(await tab.screen(), target)
    await tab.page.set_viewport_size({"width": 760, "height": 520})

    async def refitted() -> bool:
        new_cols, new_rows = await tab.terminal_size()
        return new_cols < cols and new_rows < rows

    await eventually(refitted, "the page telling the client its smaller terminal")

    async def board_drawn_again() -> bool:
        try:
            return othello_square_cell(await tab.screen(), target) != before
        except (AssertionError, StopIteration):  # not drawn yet at the new size
            return False

    await eventually(board_drawn_again, "the board drawn again, smaller")
    await tab.screenshot(artefacts / "othello-resized.png")
    await tab.click_square(target)
    assert (await watcher.state_after(room.room, state.seq)).moves[-1] == target
    await tab.page.context.close()


TRON_KEYS = {NORTH: "ArrowUp", EAST: "ArrowRight", SOUTH: "ArrowDown", WEST: "ArrowLeft"}
TRON_STEPS = {NORTH: (0, -1), EAST: (1, 0), SOUTH: (0, 1), WEST: (-1, 0)}


def free_run(state: Any, seat: int, direction: int) -> int:
    """How many empty squares (the board's " ") lie ahead of a rider's head in `direction`."""
    (x, y), (dx, dy), board = state.view["heads"][seat], TRON_STEPS[direction], state.view["board"]
    run = 0
    while 0 <= y + dy <= len(board) - 1 and 0 <= x + dx <= len(board[0]) - 1 and board[y + dy][x + dx] == " ":
        x, y, run = x + dx, y + dy, run + 1
    return run


def open_side(state: Any, seat: int, heading: int) -> int:
    """The turn off `heading` with the longer free run ahead (the arena has walls inside)."""
    sides = (NORTH, SOUTH) if heading in (EAST, WEST) else (EAST, WEST)
    return max(sides, key=lambda side: free_run(state, seat, side))


async def pick_tron(tab: Tab) -> None:
    """In the quick menu: from Play back to the game's selector, open it, type the game's name (the list jumps to
    it), choose it with Enter, and play (ctrl+s). Each step waits for the screen it needs."""
    for key in ("Shift+Tab", "Shift+Tab", "Shift+Tab", "Enter"):
        await tab.press(key)
    await tab.on_screen("Connect Four")  # the selector's list is open
    await tab.type("tron light")  # type-to-search; should its query restart between keys, any tail matches Tron too
    await tab.press("Enter")
    await tab.on_screen(r"Game +Tron light cycles")
    await tab.press("Control+s")


async def test_a_tron_rider_in_the_browser_steers_with_the_arrow_keys(browser, server, watcher, artefacts):
    """A friend starts a Tron game against the AI in the browser and steers the cycle with the arrow keys: each
    turn pressed is the rider's direction in the game's next ticks, as an ordinary client watching sees them."""
    tab = await open_tab(browser, server.page_url)
    room, seat = await start_ai_game(tab, watcher, "tia", game="tron", choose=pick_tron)
    state = await watcher.at(room.room, 0)
    while state.view["tick"] < 1:  # the countdown, then the first tick: the cycle rides its first heading
        state = await watcher.state_after(room.room, state.seq)
    ridden = [state.view["dirs"][seat]]
    for _ in range(2):  # two turns, each to the more open side
        turn = open_side(state, seat, ridden[-1])
        await tab.press(TRON_KEYS[turn])
        while state.view["dirs"][seat] != turn:
            assert state.view["alive"][seat], f"the rider crashed before turning {turn}: {ridden}"
            state = await watcher.state_after(room.room, state.seq)
        ridden.append(turn)
    await tab.screenshot(artefacts / "tron.png")
    assert ridden[0] != ridden[1] != ridden[2]
    await tab.page.context.close()


async def test_a_room_code_copied_with_y_and_pasted_with_ctrl_shift_v_joins_that_room(browser, server, watcher):
    """A player waiting in a private room copies its code with `y` (to the browser's clipboard: the page's terminal
    takes the client's OSC 52); a friend pastes it into the Code dialog with Ctrl+Shift+V (Ctrl+V is the
    terminal's own key, as in any terminal) and takes the room's free seat."""
    context = await browser.new_context(viewport=VIEWPORT, permissions=["clipboard-read", "clipboard-write"])
    hal = await open_tab(browser, server.page_url, context)
    await sign_in(hal, watcher, "hal")
    room = await watcher.request(CreateRoom, game="othello", private=True)
    await watcher.request(Join, room=room.room, role=Role.SPECTATOR)  # to see who sits down
    await hal.press("o")
    await hal.shows("Join a room by its code")
    await hal.type(room.room)
    await hal.press("Enter")
    await watcher.wait(lambda m: m.type == "room" and m.room == room.room and any(s.name == "hal" for s in m.seats))
    await hal.evaluate("navigator.clipboard.writeText('')")
    await hal.press("y")
    await hal.shows(f"Room code {room.room} copied")
    assert await hal.evaluate("navigator.clipboard.readText()") == room.room
    # a friend is another visitor (another cookie: another context), in the same browser so the clipboard is shared
    other = await browser.new_context(viewport=VIEWPORT, permissions=["clipboard-read", "clipboard-write"])
    pam = await open_tab(browser, server.page_url, other)
    await sign_in(pam, watcher, "pam")
    await pam.press("o")
    await pam.shows("Join a room by its code")
    await pam.press("Control+Shift+V")
    await pam.on_screen(room.room)
    await pam.press("Enter")
    seated = await watcher.wait(
        lambda m: m.type == "room" and m.room == room.room and {seat.name for seat in m.seats} == {"hal", "pam"}
    )
    assert sorted(seat.name for seat in seated.seats) == ["hal", "pam"]
    await other.close()
    await context.close()
