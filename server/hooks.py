"""The seam between a server and the cluster it may be a node of.

`GameServer` (server/app.py) calls a `NodeHooks` at each point where a cluster needs to act: a connection admitted
or gone, a frame received (it may belong to a room another node owns), a session welcomed or disconnected, the
lobby's rooms changed, records refused by the store's fencing, an admin's action stored. A lone server uses
`LoneNode`, which does what a server with no other nodes does: nothing, or hand the frame to the server itself.
server/cluster/node.py's `ClusterNode` is the other implementation; it reaches the server only through the
server's public methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection

    from gamenight.server.app import GameServer
    from gamenight.server.records import Moderated, Record
    from gamenight.server.sessions import Client


class NodeHooks(Protocol):
    """What a server asks of the cluster it is a node of (every method is called on the event loop)."""

    restores_rooms: bool  # True: the server restores stored rooms at start-up (a cluster's nodes claim them instead)

    async def start(self) -> None:
        """The server listens: join the cluster."""

    async def stop(self) -> None:
        """The server stopped: leave the cluster."""

    def health(self) -> str:
        """Lines the `/health` answer adds ("" when there is nothing to say)."""

    async def admit(self, ip: str) -> bool | None:
        """A connection from `ip`: False refuses it; True counts it (then `depart` is called); None: not counted."""

    def depart(self, ip: str) -> None:
        """A connection that `admit` counted has closed."""

    async def receive(self, ws: ServerConnection, session: str | None, frame: Any) -> str | None:
        """One frame from a connection: handled here or routed to the node that owns its room; the session after."""

    def welcomed(self, client: Client, resumed: bool) -> None:
        """A session said hello (`resumed`: with a resume token) and was welcomed."""

    def disconnected(self, session: str) -> None:
        """A session's connection closed."""

    def routed(self, session: str) -> bool:
        """True if the session plays or watches on another node (its connection here is not idle)."""

    def publish_changes(self) -> None:
        """The lobby's rooms changed: tell the other nodes (before the frames that show it go out)."""

    def fenced(self, records: list[Record], exc: Exception | None) -> bool:
        """The store refused `records`: True if that is because another node owns their room (let it go)."""

    def moderated(self, action: Moderated) -> None:
        """An admin's action is stored: the other nodes carry it out on the sessions connected to them."""


class LoneNode:
    """The hooks of a server with no other nodes."""

    restores_rooms = True

    def __init__(self, server: GameServer) -> None:
        self.server = server

    async def start(self) -> None:
        """Nothing to join."""

    async def stop(self) -> None:
        """Nothing to leave."""

    def health(self) -> str:
        """Nothing to add."""
        return ""

    async def admit(self, ip: str) -> bool | None:
        """Every connection is the server's own business (its own per-address caps apply)."""
        return None

    def depart(self, ip: str) -> None:
        """Nothing was counted."""

    async def receive(self, ws: ServerConnection, session: str | None, frame: Any) -> str | None:
        """Every room is here: the server handles the frame."""
        return self.server.receive(ws, session, frame)

    def welcomed(self, client: Client, resumed: bool) -> None:
        """Nobody else needs to know."""

    def disconnected(self, session: str) -> None:
        """Nobody else needs to know."""

    def routed(self, session: str) -> bool:
        """Nothing is played elsewhere."""
        return False

    def publish_changes(self) -> None:
        """Nobody else lists these rooms."""

    def fenced(self, records: list[Record], exc: Exception | None) -> bool:
        """No other node can own a room: a refused write is this server's failure."""
        return False

    def moderated(self, action: Moderated) -> None:
        """Every session is connected here: the action has reached all it covers."""
