"""What the web front door's browser tests share, whatever browser drives the page: the `gamenight-server --web`
process, a tab's terminal output and keys, and the checks over the protocol of what a browser player did."""

from __future__ import annotations

import abc
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rich.cells import cell_len

from gamenight.protocol.messages import Join, ListGames, ListPlayers, ListRooms
from gamenight.protocol.vocab import Role
from gamenight.server.games import REGISTRY
from tests.peer import Peer
from tests.procs import living
from tests.server.serverproc import NO_ROOM_CAPS
from tests.waiting import eventually

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


ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
"""Terminal control sequences (CSI, OSC, two-byte escapes): what is left of the client's output is its text."""
ROOM_CODE = re.compile(rb"room ([A-Z0-9]{4,8})\b")  # as the game screen's title names its room
MOVE_TO = re.compile(rb"\x1b\[(\d+);(\d+)H")  # how Textual places each run of text it draws


class Tab(abc.ABC):
    """A browser tab on the page, whatever browser it is in: the bytes its terminal was sent so far (the client's
    screen output: the terminal is drawn on a canvas, with no text in the page to read) and the keys it is sent.
    Keys are named as Playwright names them ("Enter", "ArrowUp", "Control+s", "n")."""

    @abc.abstractmethod
    async def output(self) -> bytes:
        """Everything the client has written to this tab's terminal so far."""

    @abc.abstractmethod
    async def press(self, key: str) -> None:
        """Press and release one key (with its modifiers)."""

    @abc.abstractmethod
    async def type(self, text: str) -> None:
        """Type a text, key by key."""

    @abc.abstractmethod
    async def sent(self) -> list[str]:
        """The terminal websocket's URL, then every text frame the page sent on it (its size, its keys)."""

    @abc.abstractmethod
    async def click(self, x: float, y: float) -> None:
        """A left click at (x, y) CSS pixels from the viewport's top left."""

    @abc.abstractmethod
    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""

    @abc.abstractmethod
    async def screenshot(self, path: Path) -> None:
        """Save a PNG of what the tab shows."""

    async def mark(self) -> int:
        """Where the output is now: `shows` can look only at what comes after."""
        return len(await self.output())

    async def text(self, since: int = 0) -> bytes:
        """The output's text after `since`, control sequences taken out."""
        return ANSI.sub(b"", (await self.output())[since:])

    async def shows(self, text: str, since: int = 0) -> None:
        """Wait until the client has written `text` (after `since`)."""

        async def written() -> bool:
            return text.encode() in await self.text(since)

        await eventually(written, f"{text!r} on the screen")

    async def screen(self) -> list[str]:
        """The lines the terminal shows now."""
        cols, rows = await self.terminal_size()
        return screen_lines(await self.output(), rows, cols)

    async def on_screen(self, pattern: str) -> None:
        """Wait until a line the terminal shows now matches the regular expression `pattern` (`shows` waits for a
        text written once, perhaps drawn over since)."""

        async def showing() -> bool:
            return any(re.search(pattern, line) for line in await self.screen())

        await eventually(showing, f"{pattern!r} on the screen now")

    async def terminal_size(self) -> tuple[int, int]:
        """The terminal's (columns, rows) as the page last told the client: in the websocket's URL when it opened,
        then in a "resize" frame each time xterm.js fits the terminal to a new page size."""
        sizes = [size for size in map(size_of, await self.sent()) if size is not None]
        assert sizes, "the page has not said its terminal's size"
        return sizes[-1]

    async def click_square(self, square: str) -> None:
        """Click the middle of an Othello square where the screen shows it (the terminal's cells are its screen
        element's size over its columns and rows)."""
        cols, rows = await self.terminal_size()
        row, col = othello_square_cell(await self.screen(), square)
        box = json.loads(
            await self.evaluate("JSON.stringify(document.querySelector('.xterm-screen').getBoundingClientRect())")
        )
        await self.click(box["x"] + (col + 0.5) * box["width"] / cols, box["y"] + (row + 0.5) * box["height"] / rows)

    async def has_focus(self) -> bool:
        """Whether the terminal's input has the keyboard focus (keys go to the client without a click)."""
        return bool(await self.evaluate("document.activeElement.classList.contains('xterm-helper-textarea')"))


def size_of(sent: str) -> tuple[int, int] | None:
    """The terminal size (columns, rows) a text the page sent says: its websocket's URL (?width=&height=) or a
    ["resize", {"width", "height"}] frame; None for any other."""
    if sent.startswith(("ws://", "wss://")):
        query = parse_qs(urlsplit(sent).query)
        return (int(query["width"][0]), int(query["height"][0])) if "width" in query and "height" in query else None
    try:
        frame = json.loads(sent)
    except ValueError:
        return None
    if isinstance(frame, list) and len(frame) == 2 and frame[0] == "resize":
        return int(frame[1]["width"]), int(frame[1]["height"])
    return None


def screen_lines(output: bytes, rows: int, cols: int) -> list[str]:
    """The terminal's screen after `output`, as lines of text: Textual draws every run of text after a cursor move
    to its place (ESC[row;colH), so replaying the moves and the text between them gives what is on the screen now;
    the other control sequences (colours, modes) take no room. Wide characters take two columns."""
    screen = [[" "] * cols for _ in range(rows)]
    row = col = 0
    for chunk in re.split(rb"(\x1b\[\d+;\d+H)", output):
        move = MOVE_TO.fullmatch(chunk)
        if move:
            row, col = int(move[1]) - 1, int(move[2]) - 1
            continue
        if b"\x1b[2J" in chunk:
            screen = [[" "] * cols for _ in range(rows)]
        for char in ANSI.sub(b"", chunk).decode(errors="replace"):
            if char in "\r\n" or not 0 <= row < rows:
                continue
            if col < cols:
                screen[row][col] = char
            col += cell_len(char) or 1
    return ["".join(line) for line in screen]


FILE_LETTERS = re.compile(r"(?<!\S)a(?: +[b-j](?!\S))+")  # the board's line of file letters: "a  b  c ..."


def othello_square_cell(lines: list[str], square: str) -> tuple[int, int]:
    """The terminal cell (row, col) at the middle of an Othello square on the screen: its file letter's column in
    the board's line of file letters, its rank number's row in the labels left of the board."""
    files, run = next((i, found) for i, line in enumerate(lines) if (found := FILE_LETTERS.search(line)))
    letters = {match[0]: run.start() + match.start() for match in re.finditer(r"[a-j]", run[0])}
    board_left = letters["a"] - (letters["b"] - letters["a"]) // 2  # the first square's left edge
    rank = int(square[1:])
    for row in range(files + 1, len(lines)):
        if lines[row][max(0, board_left - 3) : board_left].strip() == str(rank):
            return row, letters[square[0]]
    raise AssertionError(f"no rank {rank} left of the board at column {board_left}: {lines[files:]}")


def othello_legal(room: Any, state: Any, seat: int) -> list[str]:
    """The squares `seat` may play in a room's Othello position (its moves replayed by the game's rules)."""
    rules = REGISTRY["othello"].rules
    position = rules.initial_state({"size": room.options.get("size", 8)})
    for move in state.moves:
        position = rules.apply(position, {next(iter(rules.to_move(position))): rules.parse_move(position, move)})
    return list(rules.legal_notation(position, seat))


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
    await tab.type(name)
    await tab.press("Enter")
    await eventually(lambda: online(watcher, name), f"{name} online")


async def play_until(watcher: Peer, room: str, tabs: dict[int, Tab], done: Callable[[Any], bool]) -> Any:
    """Press Enter (play the square under the board's cursor, which sits on a legal one on your turn) in the tab
    of whichever seat is to move, until `done(state)`; returns that state. A key pressed before the tab has the
    position is pressed again."""
    state = await watcher.at(room, 0)
    while not done(state):
        movers = [seat for seat in state.to_move if seat in tabs]
        if movers:
            await tabs[movers[0]].press("Enter")
        try:
            state = await asyncio.wait_for(watcher.state_after(room, state.seq), MOVE_WAIT_S if movers else 60)
        except TimeoutError:
            continue
    return state


async def start_ai_game(
    tab: Tab,
    watcher: Peer,
    name: str,
    lobby: Path | None = None,
    game: str = "othello",
    choose: Callable[[Tab], Awaitable[None]] | None = None,
) -> tuple[Any, int]:
    """A friend who has just opened the page (title, keyboard focus from the start) gives a name (a screenshot of
    the lobby saved at `lobby`), presses n and starts a game against the AI from the quick menu: `choose` picks
    `game` there and plays, or Enter plays its default (Othello); the watcher joins the room as a spectator.
    Returns the room as listed and the friend's seat."""
    assert await tab.evaluate("document.title") == "gamenight"
    assert await tab.has_focus()
    await sign_in(tab, watcher, name)
    await tab.shows(f"Hello {name}")
    if lobby is not None:
        await tab.screenshot(lobby)
    await tab.press("n")  # the quick menu, Play focused: Enter plays its choice (Othello, AI level 3 at first)
    await tab.shows("Play against the AI")
    await (choose(tab) if choose is not None else tab.press("Enter"))
    room = await room_of(watcher, name)
    assert room.game == game
    await watcher.request(Join, room=room.room, role=Role.SPECTATOR)
    return room, next(s.seat for s in room.seats if s.name == name)


async def games_of(watcher: Peer, name: str) -> list[Any]:
    """The finished games the server's history has for `name`."""
    return list((await watcher.request(ListGames, player=name)).games)
