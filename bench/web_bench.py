"""The web front door's cost (issue 35): time from opening the page to the lobby, memory and CPU per session, and
how many sessions playing at once this host holds.

Usage (from the repository root, with the web and test extras and Debian's chromium):
    python -m bench.web_bench --tabs 10 --idle 20
    python -m bench.web_bench --play 2,4,8,12,16 --moves 8

Starts `gamenight-server --web 0` (a fresh database and data folder in a temporary folder).

Without --play it opens `--tabs` browser tabs one after the other in headless chromium, each in a context of its
own (a new visitor: the name prompt over the lobby), and times each from `goto` until the lobby's greeting line
("room(s) open") has reached the tab's terminal. With every tab open and nothing pressed, it samples each client
process's memory (RSS, and PSS, which shares the common pages out) and, over `--idle` seconds, the CPU time of the
clients and of the server.

With --play it opens tabs until there are as many as each count given, every tab a player who starts an Othello
game against the AI (n, Enter) and, at each count, has every tab play `--moves` moves at once with Enter (a new
game when one ends). A move's round trip is from the key press until the move's square name, in the game's list
of moves, has reached that tab's terminal: the browser, the tab's client process, the game server and back (also
given: until an ordinary client watching the room had the move). It also reads the CPU time the clients, the
server and the browser used while they played.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from gamenight.protocol.messages import Join, ListRooms, State
from gamenight.protocol.vocab import Role, RoomStatus
from gamenight.server.metrics import percentiles
from tests.peer import Peer

CHROMIUM = "/usr/bin/chromium"
LOBBY_TEXT = b"room(s) open"
TICKS = os.sysconf("SC_CLK_TCK")
ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")  # as tests/web/door.py
WAIT_S = 60.0  # how long one step of a tab may take before the run is called stuck


def browser_processes() -> list[int]:
    """The headless chromium's processes (this bench's browser: the host's own, if any, are counted too)."""
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() in ("chromium", "chrome", "headless_shell"):
                found.append(int(comm.parent.name))
        except (OSError, ValueError):
            continue
    return found


def children(pid: int) -> list[int]:
    """The server's web client processes (its children running gamenight.client)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and b"gamenight.client" in command:
            found.append(int(stat.parent.name))
    return found


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (0 once it has ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in KiB."""
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Pss"):
            values[name] = int(rest.split()[0])
    return values["Rss"], values["Pss"]


def start_server(folder: str, sessions: int) -> tuple[subprocess.Popen[str], str, str]:
    """`gamenight-server --web 0` for `sessions` tabs from this address; the process, the game's and the page's URL."""
    command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", f"{folder}/games.db"]
    command += ["--log-level", "warning", "--ai-workers", "1", "--web", "0"]
    command += ["--web-sessions", str(sessions), "--web-per-address", str(sessions)]
    environment = dict(os.environ, XDG_DATA_HOME=f"{folder}/data")
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
    assert server.stdout is not None
    game_port = server.stdout.readline().rsplit(":", 1)[1].strip()
    port = server.stdout.readline().strip().rstrip("/").rsplit(":", 1)[1]
    return server, f"ws://127.0.0.1:{game_port}", f"http://127.0.0.1:{port}/"


async def open_tab(browser: Any, url: str) -> tuple[Any, float]:
    """A tab in a new context (a new visitor) and the seconds from opening the page to the lobby on its screen."""
    context = await browser.new_context(viewport={"width": 1200, "height": 800})
    page = await context.new_page()
    output = bytearray()
    shown = asyncio.Event()

    def received(payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            output.extend(payload)
            if LOBBY_TEXT in output:
                shown.set()

    page.on("websocket", lambda socket: socket.on("framereceived", received))
    started = time.perf_counter()
    await page.goto(url)
    await asyncio.wait_for(shown.wait(), 120)
    return context, time.perf_counter() - started


async def measure(tabs: int, idle_s: float) -> dict[str, Any]:
    """Run the server, open the tabs, and measure."""
    with tempfile.TemporaryDirectory() as folder:
        server, _, url = start_server(folder, tabs)
        try:
            async with async_playwright() as driver:
                browser = await driver.chromium.launch(executable_path=CHROMIUM, headless=True)
                contexts, times = [], []
                for _ in range(tabs):
                    context, seconds = await open_tab(browser, url)
                    contexts.append(context)
                    times.append(seconds)
                clients = children(server.pid)
                await asyncio.sleep(2.0)  # let the last tab's start-up settle before the idle window
                memory = [memory_kib(pid) for pid in clients]
                before = {pid: cpu_seconds(pid) for pid in [*clients, server.pid]}
                await asyncio.sleep(idle_s)
                used = {pid: cpu_seconds(pid) - spent for pid, spent in before.items()}
                await browser.close()
        finally:
            server.terminate()
            server.wait(timeout=60)
    client_cpu = [used[pid] / idle_s * 100 for pid in clients]
    return {
        "tabs": tabs,
        "page_to_lobby_s": {
            "p50": round(statistics.median(times), 2),
            "max": round(max(times), 2),
            "first": round(times[0], 2),
            "all": [round(t, 2) for t in times],
        },
        "client_processes": len(clients),
        "rss_mib_per_session": round(statistics.mean(r for r, _ in memory) / 1024, 1),
        "pss_mib_per_session": round(statistics.mean(p for _, p in memory) / 1024, 1),
        "idle_cpu_percent_per_session": round(statistics.mean(client_cpu), 2),
        "idle_cpu_percent_server": round(used[server.pid] / idle_s * 100, 2),
        "idle_window_s": idle_s,
    }


class Player:
    """A tab whose visitor plays Othello against the AI with Enter, and an ordinary client watching its room."""

    def __init__(self, page: Any, name: str, watcher: Peer) -> None:
        self.page = page
        self.name = name
        self.watcher = watcher
        self.frames: list[tuple[float, bytes]] = []  # (when it arrived, the client's output), as they came
        self.room = ""
        self.seat = 0
        self.mark = 0  # the frame from which the tab's next "Your move" is looked for
        self.state: State | None = None
        page.on("websocket", lambda socket: socket.on("framereceived", self._received))

    def _received(self, payload: bytes | str) -> None:
        """Keep the client's output with its time of arrival."""
        if isinstance(payload, bytes):
            self.frames.append((time.perf_counter(), ANSI.sub(b"", payload)))

    async def shows(self, text: bytes, since: int) -> tuple[float, int]:
        """Wait until a frame from frame `since` on has `text`; when it came, and which frame it is."""
        deadline = time.perf_counter() + WAIT_S
        while time.perf_counter() < deadline:
            for index in range(since, len(self.frames)):
                when, frame = self.frames[index]
                if text in frame:
                    return when, index
            await asyncio.sleep(0.005)
        raise TimeoutError(f"{self.name}: {text!r} not shown")

    async def start_game(self, old_room: str = "") -> None:
        """From the lobby: n, Enter (the quick menu's Othello against the AI), and watch the new room."""
        self.mark = len(self.frames)
        await self.page.keyboard.press("n")
        await self.shows(b"Play against the AI", self.mark)
        await self.page.keyboard.press("Enter")
        deadline = time.perf_counter() + WAIT_S
        while not self.room or self.room == old_room:
            assert time.perf_counter() < deadline, f"{self.name}: no room"
            rooms = (await self.watcher.request(ListRooms)).rooms
            mine = [r for r in rooms if r.room != old_room and any(s.name == self.name for s in r.seats)]
            if mine:
                self.room, self.seat = mine[0].room, next(s.seat for s in mine[0].seats if s.name == self.name)
            else:
                await asyncio.sleep(0.05)
        await self.watcher.request(Join, room=self.room, role=Role.SPECTATOR)
        self.state = await self.watcher.at(self.room, 0)

    async def next_game(self) -> None:
        """The game is over: back to the lobby (b) and a new one."""
        mark = len(self.frames)
        await self.page.keyboard.press("b")
        await self.shows(LOBBY_TEXT, mark)
        await self.start_game(self.room)

    async def play(self, moves: int, round_trips: list[float], to_server: list[float]) -> None:
        """Make `moves` moves, each once the tab shows that it is this player's turn; note each one's round trip,
        and the time until the watcher had the move (the way there: browser, client process, server)."""
        made = 0
        while made < moves:
            assert self.state is not None
            while self.seat not in self.state.to_move and self.state.status != RoomStatus.FINISHED:
                self.state = await self.watcher.state_after(self.room, self.state.seq)
            if self.state.status == RoomStatus.FINISHED:
                await self.next_game()
                continue
            await self.shows(b"Your move", self.mark)  # the tab has the position: Enter plays (not a premove)
            before, mark, pressed = len(self.state.moves), len(self.frames), time.perf_counter()
            await self.page.keyboard.press("Enter")
            while len(self.state.moves) == before:
                self.state = await self.watcher.state_after(self.room, self.state.seq)
            served = time.perf_counter()
            shown, self.mark = await self.shows(str(self.state.moves[before]).encode(), mark)
            round_trips.append((shown - pressed) * 1000)
            to_server.append((served - pressed) * 1000)
            made += 1


async def new_player(browser: Any, url: str, game_url: str, name: str) -> Player:
    """A new visitor's tab: the name prompt answered, a game against the AI started."""
    context = await browser.new_context(viewport={"width": 1200, "height": 800})
    player = Player(await context.new_page(), name, await Peer.connect(game_url, f"w-{name}"))
    await player.page.goto(url)
    await player.shows(b"What name should", 0)
    await player.page.keyboard.type(name)
    mark = len(player.frames)
    await player.page.keyboard.press("Enter")
    await player.shows(f"Hello {name}".encode(), mark)
    await player.start_game()
    return player


async def measure_play(counts: list[int], moves: int) -> dict[str, Any]:
    """Open players up to each count; at each, all of them play `moves` moves at once: round trips and CPU."""
    levels = []
    with tempfile.TemporaryDirectory() as folder:
        server, game_url, url = start_server(folder, max(counts))
        players: list[Player] = []
        try:
            async with async_playwright() as driver:
                browser = await driver.chromium.launch(executable_path=CHROMIUM, headless=True)
                for count in counts:
                    while len(players) < count:
                        players.append(await new_player(browser, url, game_url, f"p{len(players) + 1}"))
                    levels.append(await play_level(server.pid, players, moves))
                for player in players:
                    await player.watcher.close()
                await browser.close()
        finally:
            server.terminate()
            server.wait(timeout=60)
    return {"moves_per_tab": moves, "levels": levels}


async def play_level(server: int, players: list[Player], moves: int) -> dict[str, Any]:
    """Every player makes `moves` moves at once; the round trips' percentiles and the CPU used meanwhile."""
    clients, browser = children(server), browser_processes()
    before = {pid: cpu_seconds(pid) for pid in [server, *clients, *browser]}
    started = time.perf_counter()
    round_trips: list[float] = []
    to_server: list[float] = []
    await asyncio.gather(*(player.play(moves, round_trips, to_server) for player in players))
    window = time.perf_counter() - started
    used = {pid: cpu_seconds(pid) - spent for pid, spent in before.items()}
    return {
        "sessions": len(players),
        "round_trip_ms": percentiles(round_trips),
        "press_to_watcher_ms": percentiles(to_server),
        "window_s": round(window, 1),
        "cpu_percent_per_session": round(sum(used[pid] for pid in clients) / window * 100 / len(players), 1),
        "client_cpu_ms_per_move": round(sum(used[pid] for pid in clients) * 1000 / len(round_trips), 1),
        "cpu_percent_server": round(used[server] / window * 100, 1),
        "cpu_percent_browser": round(sum(used[pid] for pid in browser) / window * 100, 1),
        "load_average_1min": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="bench.web_bench", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tabs", type=int, default=10, help="browser tabs, opened one after the other (default 10)")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of the idle CPU window (default 20)")
    parser.add_argument("--play", help="session counts to play at, e.g. 2,4,8 (tabs opened up to each in turn)")
    parser.add_argument("--moves", type=int, default=8, help="with --play: moves each tab makes at each count")
    args = parser.parse_args(argv)
    if args.play:
        result = asyncio.run(measure_play([int(count) for count in args.play.split(",")], args.moves))
    else:
        result = asyncio.run(measure(args.tabs, args.idle))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
