"""Player identities: a name claimed with a key belongs to that key; guests play under free names; bots show as bots."""

from __future__ import annotations

import secrets

import pytest

from gamenight.protocol import PROTOCOL_VERSION
from gamenight.protocol.messages import CreateRoom, Error, GetGame, Hello, Join, ListGames, Resign
from gamenight.protocol.vocab import SeatKind
from tests.peer import Peer, identity_of
from tests.waiting import eventually

KEY = "k" * 8 + secrets.token_urlsafe(16)
OTHER_KEY = "o" * 8 + secrets.token_urlsafe(16)


async def refused_hello(url: str, name: str, key: str | None = None, **hello: object) -> Error:
    """Say hello (claiming with the test identity `key` names) and return the error the server answers it with
    (the test fails on a welcome)."""
    peer = await Peer.open(url)
    try:
        await peer.send(peer.hello(name, identity_of(key) if key is not None else None, id=1, **hello))
        reply = await peer.wait(lambda m: m.id == 1)
    finally:
        await peer.close()
    assert isinstance(reply, Error), f"expected an error, got {reply.type}"
    return reply


async def test_claimed_name_comes_back_with_its_key(peers):
    """The first hello with a key claims the name; a later hello with the same key plays under it again."""
    first: Peer = await peers("alice", key=KEY)
    assert first.welcome.name == "alice" and first.welcome.claimed
    await first.close()
    again: Peer = await peers("alice", key=KEY)
    assert again.welcome.name == "alice" and again.welcome.claimed and not again.welcome.bot


async def test_claimed_name_refused_with_another_key_with_a_free_suggestion(peers, url):
    """Another key gets `name_taken` naming a free variant, and that variant can then be claimed."""
    await peers("alice", key=KEY)
    error = await refused_hello(url, "alice", key=OTHER_KEY)
    assert error.code == "name_taken" and error.suggestion == "alice2" and "alice2" in error.message
    taken: Peer = await peers(error.suggestion, key=OTHER_KEY)
    assert taken.welcome.name == "alice2" and taken.welcome.claimed
    assert (await refused_hello(url, "alice", key="x" * 20)).suggestion == "alice3"


@pytest.mark.parametrize(
    "variant",
    [
        *("ALICE", "\u0430lice", "Al\u0456ce", "AL\u0399CE", "al1ce", "AIice", "a l-i.c e", "\u00e1lice", "ａｌｉｃｅ"),
        *("al\u0131ce", "al\u026ace", "al\u0269ce", "\u0251lice", "ᴀʟɪᴄᴇ", "a\u01c0ice", "a\u026bice", "a\ua4e1ice"),
    ],
    ids=[
        *("capitals", "cyrillic a", "cyrillic i", "greek iota", "digit 1", "capital I", "spaced", "accent"),
        "fullwidth",
        *("dotless i", "small capital I", "latin iota", "latin alpha", "small capitals", "dental click", "l tilde"),
        "lisu L",
    ],
)
async def test_lookalike_of_a_claimed_name_is_refused(peers, url, variant):
    """A case, script, digit, spacing or accent variant of a claimed name cannot be claimed by another key."""
    await peers("alice", key=KEY)
    error = await refused_hello(url, variant, key=OTHER_KEY)
    assert error.code == "name_taken" and error.suggestion is not None


async def test_a_different_name_is_not_a_lookalike(peers):
    """Names that merely resemble a claimed one ("alicia", "malice") are claimed freely by other keys."""
    await peers("alice", key=KEY)
    for name in ("alicia", "malice", "bob"):
        peer: Peer = await peers(name, key=OTHER_KEY + name)
        assert peer.welcome.name == name and peer.welcome.claimed


async def test_guest_asking_for_a_claimed_name_gets_a_free_variant(peers):
    """A hello without a key for a claimed name (or a look-alike) plays as a guest under a numbered variant."""
    await peers("alice", key=KEY)
    guest: Peer = await peers("alice")
    assert guest.welcome.name == "alice2" and not guest.welcome.claimed
    sneaky: Peer = await peers("\u0430lice")
    assert sneaky.welcome.name == "\u0430lice3" and not sneaky.welcome.claimed  # alice2 is online
    room = await guest.request(CreateRoom, game="othello", options={})
    assert room.host == "alice2"


async def test_guest_with_a_free_name_keeps_it_and_does_not_claim(peers, url, game_server):
    """A guest under an unclaimed name plays under it; nobody claims it while the guest shows it (`name_taken`,
    "in use"), and once the guest is gone the name is free to claim."""
    guest: Peer = await peers("carol")
    assert guest.welcome.name == "carol" and not guest.welcome.claimed
    error = await refused_hello(url, "CAROL", key=KEY)
    assert error.code == "name_taken" and "in use" in error.message and error.suggestion == "CAROL2"
    await guest.close()
    session = game_server.lobby.clients[guest.welcome.session]
    await eventually(lambda: _now(not session.connected), "the guest's disconnection")
    owner: Peer = await peers("carol", key=KEY)
    assert owner.welcome.name == "carol" and owner.welcome.claimed


async def _now(value: bool) -> bool:
    """`value`, as the awaitable check `eventually` polls."""
    return value


@pytest.mark.parametrize("second", ["alice", "ALICE", "\u0430lice\u0336\u0336", "al\u0131ce"])
async def test_two_sessions_online_never_show_one_name(peers, second):
    """A guest asking for a name another session shows now (or a look-alike of it, Cyrillic with combining
    strokes included) plays under a free numbered variant; so does a second guest after a claimed player."""
    first: Peer = await peers("alice")
    again: Peer = await peers(second)
    assert first.welcome.name == "alice" and again.welcome.name not in ("alice", second)
    assert again.welcome.name.endswith("2")


@pytest.mark.parametrize(
    "forged",
    [
        {"signature": "00" * 64},
        {"signature": "zz" * 64},
        {"signature": "ab"},
        {"public_key": "short"},
        {"signature": None},
    ],
    ids=["wrong", "not hex", "too short", "bad public key", "missing"],
)
async def test_a_hello_whose_signature_fails_is_refused_and_claims_nothing(peers, url, forged):
    """A public key without a good signature of this connection's nonce gets `bad_signature`, and the name stays
    free for the key that can sign."""
    identity = identity_of(KEY)
    peer = await Peer.open(url)
    signature = identity.sign(peer.nonce.server, url, peer.nonce.nonce)
    fields = {"public_key": identity.public_key, "signature": signature, "url": url}
    await peer.send(Hello(protocol=PROTOCOL_VERSION, name="dave", id=1, **(fields | forged)))
    error = await peer.wait(lambda m: m.id == 1)
    await peer.close()
    assert error.type == "error" and error.code == "bad_signature"
    owner: Peer = await peers("dave", key=OTHER_KEY)
    assert owner.welcome.name == "dave" and owner.welcome.claimed


async def test_bot_claim_stays_a_bot_and_shows_in_seats(peers):
    """A name claimed as a bot is a bot in welcome and seat summaries, even when a later hello leaves `bot` out."""
    bot: Peer = await peers("rhino", key=KEY, bot=True)
    assert bot.welcome.bot and bot.welcome.claimed
    await bot.close()
    hiding: Peer = await peers("rhino", key=KEY)
    assert hiding.welcome.bot
    room = await hiding.request(CreateRoom, game="othello", options={})
    info = await hiding.request(Join, room=room.room, seat=0)
    assert info.type == "joined"
    summary = await hiding.wait(lambda m: m.type == "room" and not m.seats[0].open)
    assert summary.seats[0].kind == SeatKind.BOT and summary.seats[0].name == "rhino"


async def test_resume_keeps_the_claimed_name(peers):
    """A resume token gives back the session under its claimed name, as before identities."""
    first: Peer = await peers("erin", key=KEY)
    room = await first.request(CreateRoom, game="othello", options={})
    await first.request(Join, room=room.room, seat=0)  # a seat keeps the session while its holder is away
    await first.close()
    resumed: Peer = await peers("whatever", resume=first.welcome.token)
    assert resumed.welcome.session == first.welcome.session
    assert resumed.welcome.name == "erin" and resumed.welcome.claimed


async def test_claim_survives_a_sigkill_restart(server_process):
    """After SIGKILL and a restart on the same database, the claim holds: the key plays it, another key is refused."""
    first = server_process()
    owner = await Peer.connect(first.url, "frank", key=KEY)
    assert owner.welcome.claimed
    first.kill()
    await owner.close()
    second = server_process()
    error = await refused_hello(second.url, "FRANK", key=OTHER_KEY)
    assert error.code == "name_taken" and error.suggestion == "FRANK2"
    back = await Peer.connect(second.url, "frank", key=KEY)
    assert back.welcome.name == "frank" and back.welcome.claimed
    guest = await Peer.connect(second.url, "frank")
    assert guest.welcome.name == "frank2"
    await back.close()
    await guest.close()


async def test_bot_seat_survives_a_restart_and_history_marks_the_bot(server_process):
    """A bot's seat is still kind `bot` after SIGKILL and a restart, and the finished game lists it with `bot: true`."""
    first = server_process()
    bot = await Peer.connect(first.url, "rhino", key=KEY, bot=True)
    human = await Peer.connect(first.url, "grace", key=OTHER_KEY)
    room = await human.request(CreateRoom, game="othello", options={})
    await bot.request(Join, room=room.room, seat=0)
    await human.request(Join, room=room.room, seat=1)
    await human.expect("state")
    first.kill()
    await bot.close()
    await human.close()

    second = server_process()
    bot = await Peer.connect(second.url, "rhino", resume=bot.welcome.token)
    assert bot.welcome.bot and bot.welcome.name == "rhino"
    watcher = await Peer.connect(second.url, "watcher")  # listed: one of its seated players is back
    restored = next(r for r in watcher.welcome.rooms if r.room == room.room)
    assert [s.kind for s in restored.seats] == [SeatKind.BOT, SeatKind.HUMAN]
    await bot.send(Resign(room=room.room))
    await bot.expect("event", kind="game_over")
    listed = (await watcher.request(ListGames, player="rhino")).games
    assert [p.get("bot", False) for p in listed[0]["players"]] == [True, False]
    record = (await watcher.request(GetGame, game_id=listed[0]["game_id"])).record
    assert record["players"][0]["bot"] is True and "bot" not in record["players"][1]
    await bot.close()
    await watcher.close()


def test_stored_claims_read_back_and_a_bot_claim_never_turns_human(tmp_path):
    """Claims written to the database file come back at start-up; a claim once a bot's stays a bot's."""
    from gamenight.server.records import NameClaimed
    from gamenight.server.store import Store

    store = Store(str(tmp_path / "games.db"))
    store.write([NameClaimed("allce", "alice", "h1"), NameClaimed("rhlno", "rhino", "h2", bot=True)])
    store.write([NameClaimed("allce", "alice", "h1", bot=True)])
    store.write([NameClaimed("rhlno", "rhino", "h2", bot=False)])
    store.close()
    again = Store(str(tmp_path / "games.db"))
    claims = {c.name_key: c for c in again.claimed_names()}
    assert claims["allce"] == NameClaimed("allce", "alice", "h1", bot=True)
    assert claims["rhlno"] == NameClaimed("rhlno", "rhino", "h2", bot=True)
    again.close()


async def test_a_claim_that_cannot_be_stored_is_not_made(server_process):
    """With the disk refusing writes, a claiming hello gets `unavailable` (no welcome); once writes work again
    the name is still free, and another key claims it."""
    from tests.server.test_faults import _allow_writes, _stop_writes

    proc = server_process()
    assert proc.proc is not None
    _stop_writes(proc.proc.pid)
    error = await refused_hello(proc.url, "hal", key=KEY)
    assert error.code == "unavailable"
    _allow_writes(proc.proc.pid)
    other = await Peer.connect(proc.url, "hal", key=OTHER_KEY)
    assert other.welcome.name == "hal" and other.welcome.claimed
    await other.close()


async def test_new_claims_from_one_address_stop_at_the_days_cap(server_with):
    """Past `claims_per_ip_day` new claims, an address gets `too_many` and claims nothing (its names still come
    back with their keys, guests still play); another address claims on."""
    server = await server_with(claims_per_ip_day=3)
    url = f"ws://127.0.0.1:{server.port}"
    for n in range(3):
        peer = await Peer.connect(url, f"name{n}", key=f"{KEY}{n}")
        assert peer.welcome.claimed
        await peer.close()
    error = await refused_hello(url, "name3", key=f"{KEY}3")
    assert error.code == "too_many" and "today" in error.message
    back = await Peer.connect(url, "name0", key=f"{KEY}0")
    guest = await Peer.connect(url, "name4")
    elsewhere = await Peer.connect(url, "name3", key=f"{KEY}3", address="127.0.0.2")
    assert back.welcome.claimed and not guest.welcome.claimed and elsewhere.welcome.claimed
    for peer in (back, guest, elsewhere):
        await peer.close()


@pytest.mark.parametrize(
    "name",
    [
        "admin",
        "ADM1N",
        "root",
        "Moderator",
        "gamenight",
        "AI level 4",
        "ai level 1",
        "A\u0131 level 5",
        "bot classic",
        "B0T greedy",
        "ʀooᴛ",
    ],
)
async def test_reserved_names_and_the_ais_labels_cannot_be_claimed(peers, url, name):
    """The AI's and bots' labels, admin, root, moderator and gamenight (and look-alikes) are refused `name_taken`
    with a free name, and a guest asking for one plays under another name."""
    error = await refused_hello(url, name, key=KEY)
    assert error.code == "name_taken" and "reserved" in error.message and error.suggestion
    guest: Peer = await peers(name)
    assert guest.welcome.name != name and not guest.welcome.claimed


async def test_the_operators_reserved_names_cannot_be_claimed(server_with):
    """A name the operator reserves (`--reserve-name`) is refused like admin; other names are claimed as usual."""
    from gamenight.server.app import ServerConfig

    server = await server_with(ServerConfig(port=0, ai_workers=1, reserved_names=("Hostname Harriet",)))
    url = f"ws://127.0.0.1:{server.port}"
    assert (await refused_hello(url, "hostname harr1et", key=KEY)).code == "name_taken"
    other = await Peer.connect(url, "harriet", key=KEY)
    assert other.welcome.claimed
    await other.close()


async def test_a_claim_never_played_under_expires_at_start_up(tmp_path):
    """A server starting on a database whose claim is older than `unused_claim_s` and was never played under frees
    the name (another key claims it); a claim with a finished game stays."""
    import sqlite3

    from gamenight.server.app import GameServer, ServerConfig
    from gamenight.server.records import GameFinished, NameClaimed
    from gamenight.server.store import Store

    db = str(tmp_path / "games.db")
    store = Store(db)
    players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "zed"}]
    store.write([NameClaimed("ann", "ann", "", public_key=identity_of(KEY).public_key)])
    store.write([NameClaimed("bo", "bo", "", public_key=identity_of(KEY).public_key)])
    store.write([GameFinished("R1", 0, "othello", {}, players, {"winner": 0, "reason": "resign"}, [], "")])
    store.close()
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE names SET claimed_at = claimed_at - 31 * 86400")
    server = GameServer(ServerConfig(port=0, ai_workers=1, db=db))
    await server.start()
    try:
        url = f"ws://127.0.0.1:{server.port}"
        taker = await Peer.connect(url, "bo", key=OTHER_KEY)
        assert taker.welcome.claimed
        assert (await refused_hello(url, "ann", key=OTHER_KEY)).code == "name_taken"
        await taker.close()
    finally:
        await server.stop()
