"""Helpers of the cluster tests: waiting for a condition, and playing a turn-based game through peers."""

from __future__ import annotations

from gamenight.protocol.messages import ListRooms, MakeMove, State
from tests.peer import Peer
from tests.waiting import HANG_S, eventually

__all__ = ["HANG_S", "eventually", "listed", "play_out"]


async def listed(peer: Peer, code: str) -> bool:
    """True if `peer`'s node lists the room."""
    rooms = await peer.request(ListRooms)
    return any(summary.room == code for summary in rooms.rooms)


async def play_out(seats: dict[int, Peer], code: str, state: State, watchers: list[Peer], moves: int = 10_000) -> State:
    """Play the first legal move of whoever is to move, `moves` times or to the end; every peer follows along."""
    everyone = list(dict.fromkeys([*seats.values(), *watchers]))
    while state.status == "playing" and moves > 0:
        mover = seats[state.to_move[0]]
        legal = (await mover.at(code, state.seq)).legal
        await mover.send(MakeMove(room=code, move=legal[0], seq=state.seq))
        states = [await peer.at(code, state.seq + 1) for peer in everyone]
        state = states[0]
        moves -= 1
    return state
