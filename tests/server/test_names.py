"""Names and chat lines cannot spoof what others see: no control, direction, invisible or stacked characters."""

from __future__ import annotations

import unicodedata

import pytest

from gamenight.protocol.messages import Chat, CreateRoom, Join
from tests.peer import Peer

NAMES = {
    "control characters": ("ali\x1b[2Jce", "ali [2Jce"),
    "a right-to-left override": ("alice\u202egnp.exe", "alice gnp.exe"),
    "zero-width joiners": ("al\u200dice", "al ice"),
    "fullwidth letters": ("ａｌｉｃｅ", "alice"),
    "a stack of combining marks": ("a" + "\u0301" * 40 + "lice", "á\u0301\u0301lice"),
    "a leading combining mark": ("\u0336alice", "alice"),
    "only a Hangul filler": ("\u3164\u3164", "player"),
    "a blank Braille pattern": ("bob\u2800", "bob"),
}


@pytest.mark.parametrize(("sent", "shown"), NAMES.values(), ids=NAMES.keys())
async def test_names_are_shown_cleaned(peers, sent, shown):
    """A name with display tricks is shown to others (room host, chat) cleaned; accents themselves survive."""
    spoofer: Peer = await peers(sent)
    listener: Peer = await peers("listener")
    room = await spoofer.request(CreateRoom, game="othello", options={})
    assert unicodedata.normalize("NFC", room.host) == unicodedata.normalize("NFC", shown)
    await spoofer.request(Join, room=room.room, seat=0)
    await listener.request(Join, room=room.room, role="spectator")
    await spoofer.send(Chat(room=room.room, text="hi"))
    said = await listener.expect("event", kind="chat")
    assert said.data["name"] == room.host


async def test_chat_lines_cannot_stack_marks_or_hide_text(peers):
    """A chat line loses its direction overrides, invisible characters and marks past two per letter."""
    alice: Peer = await peers("alice")
    bob: Peer = await peers("bob")
    room = await alice.request(CreateRoom, game="othello", options={})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    await alice.send(Chat(room=room.room, text="z" + "\u0489" * 100 + " ok\u202e \u3164done"))
    said = await bob.expect("event", kind="chat")
    assert said.data["text"] == "z\u0489\u0489 ok done"
