"""Helpers of the cluster tests: waiting for a condition, and playing a turn-based game through peers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from gamenight.protocol.messages import ListRooms, MakeMove, State
from tests.peer import Peer

HANG_S = 60.0  # hang guard for conditions that take a moment (never a speed assertion)


async def eventually(check: Callable[[], Awaitable[bool]], what: str, every: float = 0.05) -> None:
    """Wait until `check()` is true, failing after the hang guard."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_S
    while not await check():
        if loop.time() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(every)


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
