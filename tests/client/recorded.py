"""Recorded server messages and a scripted connection, so client flows run without a server process.

Messages are written as the plain maps the server sends and decoded by the protocol's own codec
(`from_wire`), exactly as the real connection decodes frames. Game descriptions come from the server's
real games, so forms and boards see the real options.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from gamenight.client.app import GameNightApp
from gamenight.client.connection import CONNECTED, ConnectionStatus
from gamenight.client.link import ConnectionChanged, Post, ServerMessage
from gamenight.protocol.codec import from_wire
from gamenight.protocol.messages import PROTOCOL_VERSION, Message
from gamenight.protocol.vocab import GameDescription
from gamenight.server.games.othello import Othello
from gamenight.server.games.pentago import Pentago
from gamenight.server.games.tron import Tron
from gamenight.server.room_options import describe

FAKE_URL = "ws://recorded.test:1"
ANSWER = -1  # the id a scripted reply carries until it is sent: then it echoes its request's id


def wire(message_type: str, /, **fields: Any) -> Message:
    """A server message from its plain map, decoded by the codec as the client receives it."""
    return from_wire({"type": message_type, **fields})


def game_plain(game: Any, **more: Any) -> dict[str, Any]:
    """A real game's `welcome.games` entry as a plain map (with extra fields, e.g. `reasons`)."""
    entry = describe(game)
    plain = entry.to_plain() if isinstance(entry, GameDescription) else dict(entry)
    return {**plain, **more}


OTHELLO_REASONS = [  # how the server describes Othello's result reasons (checked against it in test_state)
    {"reason": "discs", "win": "most discs", "draw": "equal discs"},
    {"reason": "resign", "win": "resignation"},
    {"reason": "forfeit", "win": "forfeit"},
    {"reason": "time", "win": "on time"},
    {"reason": "aborted", "win": "aborted", "draw": "the game was aborted"},
]


def games(reasons: bool = False, labels: bool = False, **extra: dict[str, Any]) -> list[dict[str, Any]]:
    """The real games as plain maps, as the server describes them but without result reasons or option labels
    unless asked (a server that sends neither must still be readable); `extra[name]` adds fields to that game's
    entry."""
    entries = []
    for game in (Othello(), Pentago(), Tron()):
        entry = game_plain(game)
        if not reasons:
            entry["reasons"] = []
        if not labels:
            entry["options"] = [{**o, "label": ""} for o in entry["options"]]
        entries.append({**entry, **extra.get(game.name, {})})
    return entries


def welcome(
    rooms: Iterable[dict[str, Any]] = (),
    session: str = "s1",
    game_list: list[dict[str, Any]] | None = None,
    **more: Any,
) -> Message:
    """A welcome listing the real games and these rooms."""
    return wire(
        "welcome",
        protocol=PROTOCOL_VERSION,
        session=session,
        server="gamenight/test",
        games=games() if game_list is None else game_list,
        token="token-1",
        rooms=list(rooms),
        **more,
    )


def seat(index: int, label: str, kind: str = "open", name: str | None = None, **more: Any) -> dict[str, Any]:
    """One seat of a room summary."""
    return {"seat": index, "label": label, "kind": kind, "name": name, "connected": kind != "open", **more}


def room(
    code: str,
    game: str = "othello",
    status: str = "waiting",
    seats: list[dict[str, Any]] | None = None,
    options: dict[str, Any] | None = None,
    **more: Any,
) -> dict[str, Any]:
    """A room summary map (a `room` message's fields, an entry of `rooms`)."""
    if seats is None:
        seats = [seat(0, "black"), seat(1, "white")]
    return {
        "room": code,
        "game": game,
        "options": options or {},
        "seats": seats,
        "spectators": 0,
        "status": status,
        "private": False,
        "host": "ann",
        **more,
    }


def room_info(code: str, **fields: Any) -> Message:
    """A `room` message."""
    return wire("room", **room(code, **fields))


def othello_state(
    code: str, seq: int, moves: list[str], to_move: int | None = 0, status: str = "playing", **more: Any
) -> Message:
    """A real Othello `state` after `moves` (legal moves of the seat to move)."""
    game = Othello()
    state = game.initial_state({})
    for move in moves:
        state = game.apply(state, {state.turn: game.parse_move(state, move)})
    legal = [game.format_move(state, m) for m in game.legal_moves(state, state.turn)] if to_move is not None else []
    return wire(
        "state",
        room=code,
        seq=seq,
        game="othello",
        status=status,
        view=game.view(state),
        to_move=[] if to_move is None else [state.turn],
        legal=legal,
        moves=moves,
        last_move=moves[-1] if moves else None,
        **more,
    )


def othello_moved(code: str, seq: int, moves: list[str], mine: bool = True, **more: Any) -> Message:
    """The real `moved` of the last of `moves` (its changes computed by the game), with `legal` when `mine`."""
    game = Othello()
    state = game.initial_state({})
    before = state
    for move in moves:
        before, state = state, game.apply(state, {state.turn: game.parse_move(state, move)})
    changes = game.changes(before, state)
    legal = [game.format_move(state, m) for m in game.legal_moves(state, state.turn)] if mine else []
    return wire(
        "moved",
        room=code,
        seq=seq,
        seat=before.turn,
        move=moves[-1],
        cells=changes.cells,
        view=changes.keys,
        to_move=[state.turn],
        legal=legal,
        **more,
    )


def answer(message: Message) -> Message:
    """Mark a scripted message as the reply to the request (it gets the request's id when sent)."""
    return replace(message, id=ANSWER)


Respond = Callable[[Message], Iterable[Message]]


class FakeConnection:
    """A scripted stand-in for the client's connection: what the app sends is recorded, and `respond`
    says what the "server" sends back (replies marked with `answer`, pushes as they are)."""

    def __init__(
        self, respond: Respond | None = None, on_connect: Iterable[Message] = (), resumed: bool = False
    ) -> None:
        self.respond: Respond = respond or (lambda _: ())
        self.on_connect = list(on_connect)
        self.name = ""
        self.token: str | None = None
        self.resumed = resumed
        self.sent: list[Message] = []
        self.post: Post = lambda _: None
        self._connected = False
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self._closed = asyncio.Event()

    def __call__(self, url: str, name: str, post: Post, token: str | None) -> FakeConnection:
        """The app's `connect` factory: this connection, bound to the app."""
        self.name, self.post, self.token = name, post, token
        return self

    @property
    def connected(self) -> bool:
        """True once `run` has "connected"."""
        return self._connected

    def sent_of(self, kind: type[Message]) -> list[Any]:
        """The requests of one type the app sent, in order."""
        return [m for m in self.sent if isinstance(m, kind)]

    def send(self, message: Message) -> int:
        """Record a request and schedule the scripted answers."""
        rid = next(self._ids)
        sent = replace(message, id=rid)
        self.sent.append(sent)
        for reply in self.respond(sent):
            self.push(replace(reply, id=rid) if reply.id == ANSWER else reply)
        return rid

    async def request(self, message: Message, timeout: float = 5.0, quiet: bool = False) -> Message:
        """Send and wait for the reply that echoes the request's id."""
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        rid = self.send(message)
        self._pending[rid] = future
        return await asyncio.wait_for(future, timeout)

    def push(self, message: Message) -> None:
        """Send a server message to the app (on the next turn of the loop, as a network would)."""
        asyncio.get_running_loop().call_soon(self._deliver, message)

    def _deliver(self, message: Message) -> None:
        future = self._pending.pop(message.id, None) if message.id is not None else None
        if future is not None and not future.done():
            future.set_result(message)
        self.post(ServerMessage(message))

    async def run(self) -> None:
        """Connect at once: announce it and send the scripted first messages (a welcome, say)."""
        self._connected = True
        self.post(ConnectionChanged(ConnectionStatus(CONNECTED, FAKE_URL)))
        for message in self.on_connect:
            self.post(ServerMessage(message))
        await self._closed.wait()

    async def close(self) -> None:
        """Stop."""
        self._connected = False
        self._closed.set()


def fake_app(connection: FakeConnection, name: str = "ann") -> GameNightApp:
    """A client app whose connection is `connection`."""
    return GameNightApp(FAKE_URL, name, save_name=False, connect=connection)
