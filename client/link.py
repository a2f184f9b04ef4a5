"""The app's side of the connection: the Textual messages a `Connection` is turned into, what the app needs of a
connection (`ServerLink`, met by the real one and by a test's scripted stand-in), and the factory the app uses.

client/connection.py knows nothing of Textual (gamenight-bot uses it too): the app's connection hands each server
message to `post` as a `ServerMessage`, and each status change as a `ConnectionChanged`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.message import Message as TextualMessage

from gamenight.client.config import legacy_key, player_identity, takes_challenges
from gamenight.client.connection import Connection, ConnectionStatus
from gamenight.client.widgets import BOARDS
from gamenight.protocol.messages import Message


class ServerMessage(TextualMessage):
    """A decoded message from the server, posted to the app; `quiet` replies need no error notice."""

    def __init__(self, message: Message, quiet: bool = False) -> None:
        super().__init__()
        self.message = message
        self.quiet = quiet


class ConnectionChanged(TextualMessage):
    """The connection's status changed (posted to the app)."""

    def __init__(self, status: ConnectionStatus) -> None:
        super().__init__()
        self.status = status


Post = Callable[[TextualMessage], Any]
"""Where a connection hands what it receives (the app's `post_message`)."""


class ServerLink(Protocol):
    """What the app needs of a connection: the real `Connection`, or a test's scripted stand-in."""

    name: str
    token: str | None
    resumed: bool

    @property
    def connected(self) -> bool:
        """True between a welcome and the loss of the connection."""
        ...

    def send(self, message: Message) -> int:
        """Queue a request and return its id; NotConnected if there is no connection."""
        ...

    async def request(self, message: Message, timeout: float = ..., quiet: bool = False) -> Message:
        """Send a request and wait for its reply."""
        ...

    async def run(self) -> None:
        """Connect and stay connected until closed."""
        ...

    async def close(self) -> None:
        """Stop."""
        ...


Connect = Callable[[str, str, Post, str | None], ServerLink]
"""Makes the app's connection: (url, name, post, saved resume token)."""


def open_connection(url: str, name: str, post: Post, token: str | None) -> Connection:
    """The app's real connection to `url`, claiming `name` with this player's identity (client.config), taking
    challenges for every game the client has a board for (unless the config turns challenges off); what it
    receives is posted to the app as `ServerMessage` and `ConnectionChanged`."""
    accepts = tuple(sorted(BOARDS)) if takes_challenges() else ()

    def on_message(message: Message, quiet: bool) -> None:
        post(ServerMessage(message, quiet=quiet))

    def on_status(status: ConnectionStatus) -> None:
        post(ConnectionChanged(status))

    # The old secret key goes only to a server played on before (it had it already), and only if it asks.
    legacy = legacy_key() if token is not None else None
    return Connection(
        url, name, on_message, on_status, token=token, identity=player_identity(), legacy_key=legacy, accepts=accepts
    )
