"""Moderation (issue 37): the operator names admins with `gamenight-server admin`; admins kick, mute, ban names and
addresses, close rooms and cancel tournaments over the wire, and `gamenight-server audit` lists every action."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gamenight.protocol import PROTOCOL_VERSION, decode, encode
from gamenight.protocol.messages import (
    Chat,
    CreateRoom,
    CreateTournament,
    Error,
    Hello,
    Join,
    ListPlayers,
    ListRooms,
    Moderate,
)
from gamenight.server.__main__ import main
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.directory import RoomDirectory
from gamenight.server.moderation import Moderation
from gamenight.server.outbox import Outbox, Refusal
from gamenight.server.records import Moderated as ModeratedRecord
from gamenight.server.records import NameClaimed
from gamenight.server.sessions import Client, Sessions
from gamenight.server.store import Store
from gamenight.server.text import name_key
from tests.peer import Peer, identity_of
from tests.server.test_identity import refused_hello
from tests.waiting import eventually

BOSS_KEY = "b" * 8 + secrets.token_urlsafe(16)
EVE_KEY = "e" * 8 + secrets.token_urlsafe(16)

Peers = Callable[..., Awaitable[Peer]]


def claim(db: Path, name: str, key: str) -> None:
    """Store a name's claim as a hello with that key would have made it."""
    store = Store(str(db))
    store.write([NameClaimed(name_key(name), name, "", public_key=identity_of(key).public_key)])
    store.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database file where "boss" is claimed and made an admin with the real `gamenight-server admin add`."""
    path = tmp_path / "games.db"
    claim(path, "boss", BOSS_KEY)
    assert main(["--db", str(path), "admin", "add", "boss"]) == 0
    return path


@pytest.fixture
async def servers(db: Path) -> AsyncIterator[Callable[[], Awaitable[GameServer]]]:
    """Starts in-process servers on the database (one at a time: a restart stops the last first); stops them."""
    started: list[GameServer] = []

    async def start() -> GameServer:
        if started:
            await started[-1].stop()
        server = GameServer(ServerConfig(port=0, ai_workers=1, db=str(db)))
        await server.start()
        started.append(server)
        return server

    yield start
    await started[-1].stop()


@pytest.fixture
async def mod_server(servers: Callable[[], Awaitable[GameServer]]) -> GameServer:
    """A server on the admin's database."""
    return await servers()


@pytest.fixture
def mod_url(mod_server: GameServer) -> str:
    """The URL of the server on the admin's database."""
    return f"ws://127.0.0.1:{mod_server.port}"


@pytest.fixture
async def people(mod_url: str) -> AsyncIterator[Peers]:
    """Connects peers to the moderated server; closes them after."""
    made: list[Peer] = []

    async def make(name: str, **hello: object) -> Peer:
        peer = await Peer.connect(mod_url, name, **hello)
        made.append(peer)
        return peer

    yield make
    for peer in made:
        await peer.close()


async def closed_with(peer: Peer, code: str) -> str:
    """The error `code` the server sent `peer` before it closed the connection; returns its text."""
    error = await peer.expect("error", code=code)
    with pytest.raises(ConnectionClosed):
        await peer.wait(lambda m: False)
    assert peer.ws.close_code == 4000
    return str(error.message)


def audit_lines(db: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What `gamenight-server audit` prints for the database."""
    capsys.readouterr()
    assert main(["--db", str(db), "audit"]) == 0
    return capsys.readouterr().out.splitlines()


async def test_an_admin_kicks_a_player_and_the_audit_lists_it(people: Peers, db: Path, capsys) -> None:
    """The admin's welcome says admin; a kick closes the player's connection with `kicked` and the reason, the
    admin is told once it is logged, and `gamenight-server audit` lists who did it to whom and why."""
    boss = await people("boss", key=BOSS_KEY)
    eve = await people("eve")
    assert boss.welcome.admin and not eve.welcome.admin
    done = await boss.request(Moderate, action="kick", target="eve", reason="spamming the lobby")
    assert done.type == "moderated" and done.target == "eve" and done.until is None
    assert "spamming the lobby" in await closed_with(eve, "kicked")
    assert [line.split(" ", 2)[2] for line in audit_lines(db, capsys)] == [
        'boss kick eve: spamming the lobby {"sessions": 1}'
    ]
    again = await people("eve")  # a kick is not a ban
    assert again.welcome.name == "eve"


async def test_a_banned_name_cannot_reconnect_even_after_a_restart(
    people: Peers, servers: Callable[[], Awaitable[GameServer]], capsys, db: Path
) -> None:
    """A ban closes the name's connection with `banned`; its key, its resume token and a guest asking for the name
    are refused at hello with when the ban ends, also after the server restarts; other names still get in."""
    boss = await people("boss", key=BOSS_KEY)
    eve = await people("eve", key=EVE_KEY)
    token = eve.welcome.token
    before = time.time()
    done = await boss.request(Moderate, action="ban", target="EVE", reason="cheating", duration_s=3600)
    after = time.time()
    # The ban ends an hour after the server took it, which was between `before` and `after` (however slow).
    assert done.type == "moderated" and before + 3600 <= done.until <= after + 3600
    await closed_with(eve, "banned")
    url = f"ws://127.0.0.1:{(await servers()).port}"
    for hello in ({"key": EVE_KEY}, {"resume": token}, {}):
        refused = await refused_hello(url, "eve", **hello)
        assert refused.code == "banned" and refused.until == done.until
    bob = await Peer.connect(url, "bob")
    assert bob.welcome.name == "bob"
    await bob.close()
    assert audit_lines(db, capsys)[0].endswith('boss ban EVE: cheating {"duration_s": 3600}')  # as the admin typed it


async def test_an_unbanned_name_comes_back(people: Peers, mod_url: str) -> None:
    """Lifting a ban lets the name say hello again; lifting one that is not set is refused."""
    boss = await people("boss", key=BOSS_KEY)
    await boss.request(Moderate, action="ban", target="eve", reason="cool off", duration_s=60)
    assert (await refused_hello(mod_url, "eve")).code == "banned"
    assert (await boss.request(Moderate, action="unban", target="eve", reason="ok now")).type == "moderated"
    assert (await people("eve")).welcome.name == "eve"
    refused = await boss.request(Moderate, action="unban", target="eve", reason="twice")
    assert refused.type == "error" and refused.code == "not_allowed"


async def test_a_banned_address_is_refused_whatever_the_name(people: Peers, mod_url: str) -> None:
    """An address ban closes that address's connections and refuses its hellos under any name; other addresses
    still connect."""
    boss = await people("boss", key=BOSS_KEY)
    mallory = await people("mallory", address="127.0.0.2")
    done = await boss.request(Moderate, action="ban_address", target="127.0.0.2", reason="bots", duration_s=600)
    assert done.type == "moderated" and done.target == "127.0.0.2"
    await closed_with(mallory, "banned")
    async with connect(mod_url, local_addr=("127.0.0.2", 0)) as ws:
        await ws.recv()  # the hello_nonce every connection starts with
        await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="someone_else", id=1)))
        refused = decode(await ws.recv())
    assert isinstance(refused, Error) and refused.code == "banned" and refused.until == done.until
    assert (await people("carol")).welcome.name == "carol"
    bad = await boss.request(Moderate, action="ban_address", target="not-an-ip", reason="x", duration_s=60)
    assert bad.type == "error" and bad.code == "bad_options"


async def test_a_muted_player_cannot_chat_until_unmuted(people: Peers) -> None:
    """A muted name's chat is refused `muted` with when the mute ends (the room hears nothing); after unmute its
    chat goes through again."""
    boss = await people("boss", key=BOSS_KEY)
    eve = await people("eve")
    room = await eve.request(CreateRoom, game="othello", options={})
    await eve.request(Join, room=room.room, seat=0)
    muted = await boss.request(Moderate, action="mute", target="eve", reason="insults", duration_s=300)
    refused = await eve.request(Chat, room=room.room, text="hello?")
    assert refused.type == "error" and refused.code == "muted" and refused.until == muted.until
    await boss.request(Moderate, action="unmute", target="eve", reason="apologised")
    await eve.send(Chat(room=room.room, text="sorry all"))
    said = await eve.expect("event", kind="chat")
    assert said.data["text"] == "sorry all"


async def test_an_admin_closes_a_room_and_cancels_a_tournament(people: Peers, capsys, db: Path) -> None:
    """An admin closes anyone's room (it leaves the listing) and calls off anyone's tournament; both are logged."""
    boss = await people("boss", key=BOSS_KEY)
    ann = await people("ann", key="a" * 8 + secrets.token_urlsafe(16))
    room = await ann.request(CreateRoom, game="othello", options={})
    assert (await boss.request(Moderate, action="close_room", room=room.room, reason="abuse")).type == "moderated"

    async def gone() -> bool:
        listed = await boss.request(ListRooms)
        return room.room not in {r.room for r in listed.rooms}

    await eventually(gone, "the closed room to leave the listing")
    made = await ann.request(
        CreateTournament, game="othello", kind="round_robin", players=["AI level 1", "AI level 2"], start_in_s=600
    )
    assert made.type == "tournament" and made.status == "waiting"
    done = await boss.request(Moderate, action="cancel_tournament", tournament=made.tournament, reason="spam")
    assert done.type == "moderated" and done.target == made.tournament
    await ann.wait(lambda m: m.type == "tournament" and m.tournament == made.tournament and m.status == "cancelled")
    actions = [line.split(" ")[3] for line in audit_lines(db, capsys)]
    assert actions == ["close_room", "cancel_tournament"]


async def test_only_admins_moderate_and_nothing_is_logged_for_a_refusal(people: Peers, capsys, db: Path) -> None:
    """A guest, or a claimed player the operator did not list, gets not_allowed; an admin without a reason or with an
    unknown action gets bad_options; none of it reaches the audit log."""
    guest = await people("boss")  # a guest asking for the admin's name plays under another
    other = await people("ann", key="a" * 8 + secrets.token_urlsafe(16))
    boss = await people("boss", key=BOSS_KEY)
    for peer in (guest, other):
        refused = await peer.request(Moderate, action="kick", target="boss", reason="mine now")
        assert refused.type == "error" and refused.code == "not_allowed"
    for fields in ({"action": "kick", "target": "ann", "reason": "  "}, {"action": "smite", "reason": "why not"}):
        refused = await boss.request(Moderate, **fields)
        assert refused.type == "error" and refused.code == "bad_options"
    assert audit_lines(db, capsys) == []


async def test_admins_cannot_act_on_each_other(people: Peers, capsys, db: Path) -> None:
    """A second admin cannot kick, mute, ban or void the first, nor ban the address the first is connected from
    (not_allowed, saying only the operator acts on admins); nothing is logged, and the first stays connected."""
    deputy_key = "d" * 8 + secrets.token_urlsafe(16)
    boss = await people("boss", key=BOSS_KEY)
    await (await people("deputy", key=deputy_key)).close()  # claims the name
    assert main(["--db", str(db), "admin", "add", "deputy"]) == 0

    deputies: list[Peer] = []

    async def deputy_admin() -> bool:
        deputies.append(await people("deputy", key=deputy_key, address="127.0.0.3"))
        return deputies[-1].welcome.admin

    await eventually(deputy_admin, "the running server to read the second admin", every=0.5)
    deputy = deputies[-1]
    now = time.time()
    for fields in (
        {"action": "kick", "target": "boss"},
        {"action": "mute", "target": "Boss", "duration_s": 60},
        {"action": "ban", "target": "boss", "duration_s": 60},
        {"action": "void", "target": "boss", "since": now - 3600, "until": now},
        {"action": "ban_address", "target": "127.0.0.1", "duration_s": 60},
    ):
        refused = await deputy.request(Moderate, reason="coup", **fields)
        assert refused.type == "error" and refused.code == "not_allowed", fields
        assert "operator" in refused.message or "ban the name instead" in refused.message
    assert audit_lines(db, capsys) == []
    assert (await boss.request(ListPlayers)).type == "players"  # still connected
    mine = await boss.request(Moderate, action="kick", target="deputy", reason="no coups")
    assert mine.type == "error" and mine.code == "not_allowed"  # and the other way round


async def test_admin_add_reaches_a_running_server_and_needs_a_claimed_name(
    people: Peers, db: Path, capsys, tmp_path: Path
) -> None:
    """`admin add` on a claimed name reaches the running server (the name's next hello is an admin's); a name nobody
    claimed is refused, and `admin list` / `admin remove` show and undo it."""
    ann_key = "a" * 8 + secrets.token_urlsafe(16)
    first = await people("ann", key=ann_key)
    assert not first.welcome.admin
    assert main(["--db", str(db), "admin", "add", "nobody"]) == 1
    assert main(["--db", str(db), "admin", "add", "ANN"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "admin", "list"]) == 0
    assert capsys.readouterr().out.split() == ["ann", "boss"]

    async def admin_now() -> bool:
        peer = await people("ann", key=ann_key)
        return peer.welcome.admin

    await eventually(admin_now, "the running server to read the new admin", every=0.5)
    assert main(["--db", str(db), "admin", "remove", "ann"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "admin", "list"]) == 0
    assert capsys.readouterr().out.split() == ["boss"]


def test_a_ban_ends_at_its_time_and_one_not_stored_is_lifted() -> None:
    """Without sockets, on a clock the test moves: a ban refuses hellos until its end and not after; a ban whose
    audit record could not be stored (`lost`) refuses nothing."""
    wall = [1000.0]
    sessions = Sessions(on_count=lambda: None)
    directory = RoomDirectory(sessions, rater=lambda *args: None, tournament_of=lambda code: None)
    moderation = Moderation(sessions, directory, lambda code: Outbox(), lambda *args: Outbox(), clock=lambda: wall[0])
    boss = Client("boss-session", "boss", "boss-token-hash", ip="10.0.0.1", claimed=True)  # claimed: an admin may be
    sessions.clients[boss.session] = boss
    moderation.load_admins([(name_key("boss"), "boss")])
    ban = Moderate(action="ban", target="eve", reason="spam", duration_s=60)
    out = moderation.moderate(boss, ban, 0.0)
    assert out.records == [
        ModeratedRecord(1000.0, "boss", "ban", "eve", "spam", {"duration_s": 60}, "name", "eve", 1060.0)
    ]
    eve = Hello(protocol=PROTOCOL_VERSION, name="Eve")
    with pytest.raises(Refusal) as refused:
        moderation.admit(eve, "10.0.0.2")
    assert refused.value.code == "banned" and refused.value.until == 1060.0
    wall[0] = 1060.0
    moderation.admit(eve, "10.0.0.2")
    wall[0] = 2000.0
    out = moderation.moderate(boss, ban, 0.0)
    (record,) = out.records
    assert isinstance(record, ModeratedRecord)
    moderation.lost(record)
    moderation.admit(eve, "10.0.0.2")


async def test_an_action_that_cannot_be_logged_is_not_done(tmp_path: Path, server_process, capsys) -> None:
    """With the disk refusing writes, an admin's ban is answered `unavailable` and nothing of it happens: the player
    stays connected and, once writes work again, says hello again freely; the audit log is empty."""
    from tests.server.test_faults import _allow_writes, _stop_writes

    db = tmp_path / "games.db"  # the server_process fixture's database
    claim(db, "boss", BOSS_KEY)
    assert main(["--db", str(db), "admin", "add", "boss"]) == 0
    proc = server_process()
    assert proc.proc is not None
    boss = await Peer.connect(proc.url, "boss", key=BOSS_KEY)
    eve = await Peer.connect(proc.url, "eve")
    _stop_writes(proc.proc.pid)
    refused = await boss.request(Moderate, action="ban", target="eve", reason="spam", duration_s=600)
    assert refused.type == "error" and refused.code == "unavailable"
    assert (await eve.request(ListRooms)).type == "rooms"  # still connected, never told of a ban
    _allow_writes(proc.proc.pid)
    await eve.close()  # (while she is online, nobody else may show her name)

    async def eve_gone() -> bool:
        players = await boss.request(ListPlayers)
        return all(p.name != "eve" for p in players.players)

    await eventually(eve_gone, "the server to see eve leave")
    again = await Peer.connect(proc.url, "eve")
    assert again.welcome.name == "eve"  # no ban refuses the name
    for peer in (boss, again):
        await peer.close()
    assert audit_lines(db, capsys) == []


async def test_voiding_a_players_rated_games_gives_back_what_their_victim_lost(
    people: Peers, mod_server: GameServer, mod_url: str, db: Path
) -> None:
    """An admin voids a player's rated games in a time window: the game's rating change is undone for that player
    and refunded to the opponent who lost points, in the store and in the running server's ratings (the next game
    starts from them), and the audit log says how many games were voided."""
    from tests.server.test_ratings import alice_resigns, claimed_pair, rated_game

    boss = await people("boss", key=BOSS_KEY)
    since = time.time() - 1
    alice, bob = await claimed_pair(mod_url)
    code = await rated_game(alice, bob)
    _, over = await alice_resigns(alice, bob, code)
    changes = {c["name"]: c for c in over.data["ratings"]}
    assert changes["bob"]["after"] > changes["bob"]["before"] and changes["alice"]["after"] < changes["alice"]["before"]
    book = mod_server.lobby.ratings.standings
    assert book[(name_key("bob"), "connect4")].games == 1
    done = await boss.request(Moderate, action="void", target="Bob", reason="engine", since=since, until=time.time())
    assert done.type == "moderated" and done.target == "Bob"
    for name in ("alice", "bob"):
        standing = book[(name_key(name), "connect4")]
        assert standing.rating.rating == pytest.approx(changes[name]["before"], abs=0.01) and standing.games == 0
    store = Store(str(db))
    assert {(r.name, round(r.rating, 2), r.games) for r in store.ratings()} == {
        ("alice", changes["alice"]["before"], 0),
        ("bob", changes["bob"]["before"], 0),
    }
    (entry,) = store.audit()
    store.close()
    assert (
        entry["action"] == "void" and entry["details"]["games"] == 1 and entry["details"]["player"] == name_key("bob")
    )
    bad = await boss.request(Moderate, action="void", target="bob", reason="x", since=2.0, until=1.0)
    assert bad.type == "error" and bad.code == "bad_options"
    for peer in (alice, bob):
        await peer.close()
