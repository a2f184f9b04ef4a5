"""Client test helpers: an app connected to the in-process test server, and a way to wait on it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from textual.pilot import Pilot
from textual.widget import Widget

from gamenight.client.app import GameNightApp
from gamenight.client.local_server import LocalServer, server_command
from tests.peer import Peer
from tests.server.serverproc import NO_ROOM_CAPS, ServerProcess

WAIT_S = 10.0
BOARDS_CSS = str(Path(__file__).resolve().parents[2] / "client" / "boards.tcss")
"""The boards' stylesheet, for tests that mount a board alone in a small app."""
W = TypeVar("W", bound=Widget)


@pytest.fixture(autouse=True)
def private_config(tmp_path, monkeypatch):
    """Every client test gets its own config directory, never the user's."""
    monkeypatch.setenv("GAMENIGHT_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def url(tmp_path) -> Iterator[str]:
    """A real server in a child process, as the client itself runs one.

    In-process servers cannot start their AI worker pool under a Textual test app (its captured
    stderr has no file descriptor for multiprocessing to pass on), so the client's tests use this.
    """
    command = [*server_command(), "--db", str(tmp_path / "rooms.db")]  # never the user's database
    with LocalServer(command, log_path=tmp_path / "server.log") as server:
        assert server.url is not None
        yield server.url


@pytest.fixture
def make_app(url: str) -> Callable[..., GameNightApp]:
    """A factory of client apps connected to the test server."""

    def make(name: str = "ann") -> GameNightApp:
        return GameNightApp(url, name, save_name=False)

    return make


def noticed(app: GameNightApp, *words: str) -> bool:
    """True when a notification shown contains every one of `words`."""
    return any(all(w in n.message for w in words) for n in app._notifications)


async def select_player(app: GameNightApp, pilot: Pilot, name: str) -> None:
    """In the lobby, put the online list's cursor on `name` (once the list shows it), the list focused."""
    from textual.widgets import DataTable

    await wait_for(pilot, lambda: name in app.model.presence.players, f"{name} in the online list")
    table = app.screen.query_one("#players", DataTable)
    await wait_for(pilot, lambda: table.row_count > 0, "the online list drawn")
    table.focus()
    table.move_cursor(row=table.get_row_index(name))


async def wait_for(pilot: Pilot, condition: Callable[[], object], what: str, timeout: float = WAIT_S) -> None:
    """Let the app run until `condition()` is true; fail saying `what` was awaited if it never is.

    `timeout` only guards against a hang (a condition that never comes true); it measures nothing.
    """
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                await pilot.pause(0.02)
    except TimeoutError:
        raise AssertionError(f"{what} never happened") from None


async def mounted(app: GameNightApp, pilot: Pilot, kind: type[W], what: str = "the board") -> W:
    """The screen's `kind` widget once it is mounted: the game screen mounts its board when it handles the
    model's change, which can come a moment after the model itself says whose turn it is."""
    await wait_for(pilot, lambda: app.screen.query(kind), f"{what} mounted")
    return app.screen.query_one(kind)


async def create_room_via_form(
    app: GameNightApp, pilot: Pilot, game: str, seats: list[str], options: dict[str, object] | None = None
) -> str:
    """From the lobby: open the form (c), pick the game, fill options and seats, submit; returns the room code."""
    from textual.widgets import Input, Select, Switch

    from gamenight.client.screens.create import CreateRoomScreen
    from gamenight.client.screens.game import GameScreen

    await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
    await pilot.press("c")
    await wait_for(pilot, lambda: isinstance(app.screen, CreateRoomScreen) and app.screen.query(".seat"), "the form")
    form = app.screen
    form.query_one("#game", Select).value = game
    specs = app.model.lobby.games[game].options
    await wait_for(
        pilot, lambda: form.game.name == game and all(form.query(f"#opt-{o.name}") for o in specs), f"the {game} fields"
    )
    for name, value in (options or {}).items():
        field = form.query_one(f"#opt-{name}")
        if isinstance(field, Input):
            field.value = str(value)
        elif isinstance(field, (Select, Switch)):
            field.value = value
    seat_count = app.model.lobby.games[game].seat_count
    await wait_for(pilot, lambda: len(form.query(".seat")) == seat_count(form._raw_values()), "the seat rows")
    await pilot.pause()
    for selector, choice in zip(form.query(".seat").results(Select), seats, strict=True):
        selector.value = choice
    await pilot.press("ctrl+s")
    await wait_for(
        pilot,
        lambda: app.model.room is not None and any(isinstance(s, GameScreen) for s in app.screen_stack),
        "the game screen",
    )
    return app.model.room.code


# -- a real server process and a human on it (the bot runner's tests) ------------------------------------------
@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Starts a real server process (extra flags allowed) on a database in tmp_path; killed after the test."""
    started: list[ServerProcess] = []

    def make(*extra: str) -> ServerProcess:
        proc = ServerProcess(tmp_path / "games.db", *NO_ROOM_CAPS, *extra).start()
        started.append(proc)
        return proc

    yield make
    for proc in started:
        if proc.proc is not None and proc.proc.poll() is None:
            proc.kill()


@pytest.fixture
async def server(start_server: Callable[..., ServerProcess]) -> ServerProcess:
    """One real server process with the default limits."""
    return start_server()


@pytest.fixture
async def human(server: ServerProcess) -> AsyncIterator[Peer]:
    """A human player connected to the server (with a key: a claimed name)."""
    peer = await Peer.connect(server.url, "alice", key="alice-key-0123456789")
    yield peer
    await peer.close()
