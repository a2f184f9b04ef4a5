"""Private means private: codes give nothing away to non-members, guessing is slow, private games stay private."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gamenight.protocol.messages import Chat, CreateRoom, GetGame, Join, Leave, ListGames, MakeMove, Profile, Sync
from gamenight.server.admission import LobbyLimits
from gamenight.server.app import GameServer, ServerConfig
from tests.peer import Peer
from tests.server.test_ratings import RATED, alice_resigns, key, rated_game


@pytest.fixture
async def server(tmp_path):
    """A server on a real database file, with a guess allowance of 5 codes at once."""
    config = ServerConfig(port=0, ai_workers=1, db=str(tmp_path / "games.db"))
    server = GameServer(replace(config, lobby_limits=replace(LobbyLimits(), code_guess_burst=5)))
    await server.start()
    yield server
    await server.stop()


async def _private_pair(url: str) -> tuple[Peer, Peer, str]:
    """Alice and Bob seated in a private Othello room."""
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    room = await alice.request(CreateRoom, game="othello", options={"size": 6}, private=True)
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    return alice, bob, room.room


async def test_requests_to_a_private_room_look_like_an_unknown_code(server):
    """sync, chat, move and leave for a private room one is not in get the very answer a code in no use gets."""
    url = f"ws://127.0.0.1:{server.port}"
    _, _, code = await _private_pair(url)
    unused = "ZZZZZ" if code != "ZZZZZ" else "YYYYY"
    mallory = await Peer.connect(url, "mallory")
    for request, fields in [
        (Sync, {"seq": 0}),
        (Chat, {"text": "hi"}),
        (MakeMove, {"move": "a1"}),
        (Leave, {}),
    ]:
        real = await mallory.request(request, room=code, **fields)
        fake = await mallory.request(request, room=unused, **fields)
        assert (real.code, real.message.replace(code, unused)) == (fake.code, fake.message), request.type
        assert real.code == "unknown_room"


async def test_guessing_codes_is_rate_limited_per_address_hit_or_miss(server):
    """After the address's guess allowance is spent, even the right private code is refused `rate_limited`."""
    url = f"ws://127.0.0.1:{server.port}"
    _, _, code = await _private_pair(url)
    guessers = [await Peer.connect(url, f"g{n}") for n in range(3)]  # new sessions do not get a new allowance
    # Bob's join by the code spent one of the five; four wrong guesses spend the rest.
    answers = [(await guessers[n % 3].request(Join, room=f"Q{n:04}", role="spectator")).code for n in range(4)]
    assert answers == ["unknown_room"] * 4
    right = await guessers[0].request(Join, room=code, role="spectator")
    assert right.type == "error" and right.code == "rate_limited"
    assert 0 < right.retry_after_ms <= 10_000, "told when the next guess is allowed (6 a minute)"


async def test_a_private_rooms_finished_game_is_seen_only_by_its_players(server):
    """list_games and get_game show a private room's game to its players and to nobody else."""
    url = f"ws://127.0.0.1:{server.port}"
    alice, bob, code = await _private_pair(url)
    state = await alice.expect("state")
    await alice.send(MakeMove(room=code, move=state.legal[0], seq=state.seq))
    await bob.expect("state", seq=state.seq + 1)
    await bob.request(Leave, room=code)  # leaving a running game resigns it
    await alice.expect("event", kind="game_over")
    mine = await alice.request(ListGames, player="bob")
    assert len(mine.games) == 1
    game_id = mine.games[0]["game_id"]
    assert (await bob.request(GetGame, game_id=game_id)).type == "game"  # the leaver still sees it
    carol = await Peer.connect(url, "carol")
    assert (await carol.request(ListGames)).games == []
    assert (await carol.request(ListGames, player="alice")).games == []
    hidden = await carol.request(GetGame, game_id=game_id)
    missing = await carol.request(GetGame, game_id=game_id + 1000)
    assert (hidden.code, hidden.message.replace(str(game_id), "N")) == (
        missing.code,
        missing.message.replace(str(game_id + 1000), "N"),
    )


async def test_a_players_card_counts_private_games_only_for_those_who_played_them(server):
    """A rated private game shows in its players' own cards (games, losses, the recent list) but in nobody else's:
    a stranger's card of alice counts only her public games (issue 37: the totals gave the hidden games away)."""
    url = f"ws://127.0.0.1:{server.port}"
    alice, bob = await Peer.connect(url, "alice", key=key()), await Peer.connect(url, "bob", key=key())
    public = await rated_game(alice, bob)
    await alice_resigns(alice, bob, public)
    hidden = await alice.request(CreateRoom, game="connect4", options=RATED, private=True)
    await alice.request(Join, room=hidden.room, seat=0)
    await bob.request(Join, room=hidden.room, seat=1)
    await alice_resigns(alice, bob, hidden.room)
    stranger = await Peer.connect(url, "carol", key=key())
    theirs, mine = await stranger.request(Profile, name="alice"), await alice.request(Profile, name="alice")
    assert (mine.ratings[0].games, mine.ratings[0].losses, len(mine.recent)) == (2, 2, 2)
    assert (theirs.ratings[0].games, theirs.ratings[0].losses, len(theirs.recent)) == (1, 1, 1)
    assert theirs.ratings[0].rating == mine.ratings[0].rating  # the rating itself counts every game
    for peer in (alice, bob, stranger):
        await peer.close()


async def test_joining_a_private_room_by_its_code_says_its_game(server):
    """A private room is in nobody's lobby, so `joined` names its game: the client names the seats ("white") with it
    before the room's first push."""
    url = f"ws://127.0.0.1:{server.port}"
    alice, carol = await Peer.connect(url, "alice"), await Peer.connect(url, "carol")
    room = await alice.request(CreateRoom, game="connect4", options={}, private=True)
    assert (await alice.request(Join, room=room.room, seat=0)).game == "connect4"
    joined = await carol.request(Join, room=room.room)
    assert joined.type == "joined" and joined.game == "connect4" and joined.seat == 1
