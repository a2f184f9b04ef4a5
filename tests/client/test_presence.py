"""Presence and challenges in the client state, driven by recorded server message sequences (no Textual, no server)."""

from __future__ import annotations

from gamenight.client.presence import BOT_MARK, Ask, offer_text, player_label
from gamenight.client.state import ClientState
from gamenight.protocol.messages import ListPlayers
from tests.client.recorded import welcome, wire

RHINO = {"name": "rhino", "bot": True, "claimed": True, "games": ["othello"], "playing": 0, "online": True}
BEA = {"name": "bea", "bot": False, "claimed": True, "games": ["othello", "tron"], "playing": 1, "online": True}
ANN = {"name": "ann", "bot": False, "claimed": True, "games": ["othello"], "playing": 0, "online": True}


def lobby_with_players() -> ClientState:
    """ann in the lobby, welcomed, with the `players` reply listing rhino (a bot), bea and herself."""
    state = ClientState("ann")
    state.apply(welcome())
    state.apply(wire("players", players=[RHINO, BEA, ANN], id=1))
    return state


def offered(state: ClientState, challenge: str = "c1", room: str | None = None):
    """A `challenged` push from rhino offering Othello size 10, ann to play white (seat 1)."""
    return state.apply(
        wire(
            "challenged",
            challenge=challenge,
            **{"from": RHINO},
            game="othello",
            options={"size": 10},
            seat=1,
            expires_ms=60000,
            room=room,
        )
    )


def test_welcome_in_the_lobby_asks_who_is_online():
    """A welcome while in no room asks `list_players` (the server pushes presence only to the lobby)."""
    state = ClientState("ann")
    changes = state.apply(welcome())
    assert any(isinstance(r, ListPlayers) for r in changes.requests)


def test_players_reply_lists_everyone_but_me_bots_first():
    """The `players` reply fills the online list: bots first, marked, and me left out."""
    state = lobby_with_players()
    online = state.presence.online("ann")
    assert [p.name for p in online] == ["rhino", "bea"]
    assert player_label(online[0]) == f"rhino {BOT_MARK}" and player_label(online[1]) == "bea"
    assert [p.name for p in state.presence.takers("tron", "ann")] == ["bea"]


def presence_push(*players: dict[str, object]):
    """A batched `lobby` push carrying these presence changes and no room change."""
    return wire("lobby", rooms=[], gone=[], watching=True, players=list(players))


def test_lobby_pushes_add_update_and_remove_players():
    """A `lobby` push's `players` adds someone, a later one changes what they take, and `online: false` removes
    them; a push with rooms only leaves the online list alone."""
    state = lobby_with_players()
    cat = {"name": "cat", "bot": False, "games": [], "playing": 0, "online": True}
    changes = state.apply(presence_push(cat))
    assert changes.players and "cat" in state.presence.players
    state.apply(presence_push({**cat, "games": ["pentago"]}, {**BEA, "playing": 2}))
    assert state.presence.players["cat"].games == ("pentago",) and state.presence.players["bea"].playing == 2
    changes = state.apply(presence_push({"name": "rhino", "bot": True, "online": False}))
    assert changes.players and "rhino" not in state.presence.players
    changes = state.apply(presence_push())
    assert not changes.players and changes.lobby and set(state.presence.players) == {"bea", "ann", "cat"}


def test_challenge_sent_then_declined_with_reason():
    """My challenge is pending once `challenge_sent` echoes its request; a decline ends it with the reason said."""
    state = lobby_with_players()
    state.presence.asking(5, Ask("rhino", "othello"))
    changes = state.apply(wire("challenge_sent", challenge="c9", to="rhino", expires_ms=60000, id=5))
    assert changes.challenges and [p.to for p in state.presence.pending_to("rhino")] == ["rhino"]
    assert state.presence.pending["c9"].game == "othello"
    assert any("waiting for rhino" in n.text for n in changes.notices)
    changes = state.apply(wire("challenge_gone", challenge="c9", why="declined", reason="busy"))
    assert not state.presence.pending
    assert any("declined" in n.text and "busy" in n.text for n in changes.notices)


def test_challenge_expired_and_left_are_told():
    """An unanswered challenge that expires, or whose target leaves, ends with a notice saying so."""
    state = lobby_with_players()
    for challenge, why, words in (("c1", "expired", "expired"), ("c2", "left", "left")):
        state.apply(wire("challenge_sent", challenge=challenge, to="rhino", expires_ms=1000))
        changes = state.apply(wire("challenge_gone", challenge=challenge, why=why))
        assert any(words in n.text and "rhino" in n.text for n in changes.notices)
    assert not state.presence.pending


def test_refused_challenge_is_forgotten_and_shown():
    """A challenge the server refuses (too_many, unknown_player, not_allowed) is dropped and its error shown."""
    state = lobby_with_players()
    for rid, code in ((6, "too_many"), (7, "unknown_player"), (8, "not_allowed")):
        state.presence.asking(rid, Ask("rhino", "othello"))
        changes = state.apply(wire("error", code=code, message=f"refused: {code}", id=rid))
        assert rid not in state.presence.asked
        assert [n.severity for n in changes.notices] == ["error"] and code in changes.notices[0].text


def test_an_offer_opens_and_its_end_closes_it():
    """A `challenged` push is an offer to answer; its `challenge_gone` (withdrawn) closes it with a notice."""
    state = lobby_with_players()
    changes = offered(state)
    assert changes.offered is not None and changes.offered.sender.name == "rhino"
    assert "c1" in state.presence.offers
    text = offer_text(changes.offered, state.lobby.games)
    assert "rhino [bot] challenges you to Othello" in text and "10" in text and "white" in text
    changes = state.apply(wire("challenge_gone", challenge="c1", why="withdrawn"))
    assert changes.offers_gone == ["c1"] and not state.presence.offers
    assert any("withdrawn" in n.text for n in changes.notices)


def test_an_invite_offer_names_the_room():
    """An invite (a `challenged` with `room`) says which room it is for."""
    state = lobby_with_players()
    changes = offered(state, room="K7QXM")
    assert changes.offered is not None
    assert "invites you to room K7QXM" in offer_text(changes.offered, state.lobby.games)


def test_my_decline_is_no_news_to_me():
    """Declining an offer forgets it; the server's reply to my decline adds no notice."""
    state = lobby_with_players()
    offered(state)
    state.presence.answering("c1")
    changes = state.apply(wire("challenge_gone", challenge="c1", why="declined", id=9))
    assert not changes.notices and not state.presence.offers


def test_accepted_challenge_makes_me_host_of_its_room():
    """When my challenge is accepted, I am seated by `joined` and the room is mine to host."""
    state = lobby_with_players()
    state.apply(wire("challenge_sent", challenge="c3", to="rhino", expires_ms=60000))
    changes = state.apply(wire("joined", room="R2D2X", **{"as": "player"}, seat=0))
    assert changes.entered is not None and not changes.entered.host
    changes = state.apply(wire("challenge_gone", challenge="c3", why="accepted", room="R2D2X"))
    assert state.room is not None and state.room.host and changes.room
    assert any("accepted" in n.text for n in changes.notices)


def test_a_new_session_forgets_the_old_challenges():
    """A welcome that starts a new session (not a resume) drops pending challenges and offers."""
    state = lobby_with_players()
    state.apply(wire("challenge_sent", challenge="c4", to="rhino", expires_ms=60000))
    offered(state, challenge="c5")
    state.apply(welcome(session="s2"))
    assert not state.presence.pending and not state.presence.offers


def test_my_tournaments_invitations_are_pending_and_their_end_names_the_tournament():
    """As a tournament's host, each `challenge_sent` pushed for a person invited is a pending line naming the
    tournament, and its end (declined with a reason, or accepted) is a notice saying which invitation it was."""
    state = lobby_with_players()
    for challenge, to in (("i1", "rhino"), ("i2", "bea")):
        changes = state.apply(wire("challenge_sent", challenge=challenge, to=to, expires_ms=60000, tournament="t77"))
        assert any(f"invitation to tournament t77 was sent: waiting for {to}" in n.text for n in changes.notices)
    assert state.presence.pending["i1"].tournament == "t77" and state.presence.pending["i1"].room is None
    changes = state.apply(wire("challenge_gone", challenge="i1", why="declined", reason="not tonight"))
    assert any(
        n.text == "Your invitation to tournament t77 to rhino was declined: not tonight" for n in changes.notices
    )
    changes = state.apply(wire("challenge_gone", challenge="i2", why="accepted", tournament="t77"))
    assert any("invitation to tournament t77 to bea was accepted" in n.text for n in changes.notices)
    assert not state.presence.pending and state.room is None and not state.hosted


def test_a_tournament_invitation_says_what_it_enters_me_in():
    """A `challenged` with `tournament` reads as an invitation into that tournament: its kind, game, start, who is
    entered and who else is invited; its expiry says it was a tournament invitation."""
    state = lobby_with_players()
    offer = {"tournament": "t77", "kind": "arena", "entries": ["rhino", "AI level 3"], "invited": ["bea", "ann"]}
    changes = state.apply(
        wire(
            "challenged",
            challenge="i3",
            **{"from": RHINO},
            game="othello",
            options={"size": 10},
            seat=0,
            expires_ms=60000,
            tournament={**offer, "duration_s": 1800, "starts_in_ms": 120000},
        )
    )
    assert changes.offered is not None and changes.offered.tournament is not None
    text = offer_text(changes.offered, state.lobby.games)
    assert text.startswith("rhino [bot] invites you to an arena (30 min) of Othello (")
    assert text.endswith("starting in 120 s: tournament t77, entered: rhino, AI level 3; invited: bea, ann")
    changes = state.apply(wire("challenge_gone", challenge="i3", why="expired"))
    assert any(n.text == "rhino's tournament invitation expired: no answer in time" for n in changes.notices)


def test_a_seat_a_tournament_gives_me_is_announced_as_its_game_even_after_a_resume():
    """A `joined` naming a tournament opens its game with a notice saying so, not "welcome back", and takes me
    out of a room I was only looking at."""
    state = lobby_with_players()
    state.apply(welcome(), resumed=True)
    state.apply(wire("joined", room="WATCH", **{"as": "spectator"}, seat=None, id=3))
    changes = state.apply(wire("joined", room="PX7TM", **{"as": "player"}, seat=1, tournament="t77"))
    assert changes.entered is not None and state.room is not None and state.room.code == "PX7TM"
    assert [n.text for n in changes.notices] == ["Your game in tournament t77 starts: room PX7TM"]
