"""The lobby's services on their own, without sockets or a lobby: sessions, the room directory, admission, the
listing, presence, challenges, the history service and the one token bucket, each on a clock the test moves."""

from __future__ import annotations

import pytest

from gamenight.protocol import PROTOCOL_VERSION
from gamenight.protocol.messages import ChallengeRequest, GetGame, Hello, ListRooms, Profile
from gamenight.protocol.vocab import Role, RoomStatus
from gamenight.server.admission import Admission, LobbyLimits
from gamenight.server.bucket import Bucket, Window
from gamenight.server.challenges import Challenges
from gamenight.server.directory import PROMPT_CLOSE_S, RoomDirectory, validated
from gamenight.server.history_service import HistoryService
from gamenight.server.listing import MAX_BATCH_ROOMS, Listing
from gamenight.server.presence import Presence
from gamenight.server.records import NameClaimed
from gamenight.server.room import Outbox, Refusal, Room
from gamenight.server.sessions import SESSION_GRACE_S, Proof, Sessions, hash_token
from tests.peer import identity_of

KEY = "k" * 32
PROOF = Proof("test-server", "ab" * 32)  # what a hello signs here: a server id and a connection's nonce
URL = "ws://games.example:8765"  # the address the tests' hellos are signed for


def signed(name: str, who: str | None, proof: Proof = PROOF, url: str = URL, **fields: object) -> Hello:
    """A hello for `name` dialed at `url`, claiming with the test identity `who` names (its signature of `proof`),
    if given."""
    if who is not None:
        identity = identity_of(who)
        signature = identity.sign(proof.server, url, proof.nonce)
        fields |= {"public_key": identity.public_key, "signature": signature, "url": url}
    return Hello(protocol=PROTOCOL_VERSION, name=name, **fields)  # type: ignore[arg-type]


class Services:
    """The services wired as the lobby wires them (without rooms' tournaments), for one test."""

    def __init__(self, limits: LobbyLimits | None = None) -> None:
        self.forgotten: list[str] = []
        self.sessions = Sessions(on_count=lambda: None, on_forget=self.forgotten.append)
        self.directory = RoomDirectory(self.sessions, rater=lambda *args: None, tournament_of=lambda code: None)
        self.listing = Listing(self.directory, lambda: self.sessions.online)
        self.sessions.on_count = self.listing.counts_dirty
        self.admission = Admission(limits or LobbyLimits(), self.sessions, self.directory)
        self.presence = Presence(self.sessions, self.directory, self.listing)
        self.challenges = Challenges(self.sessions, self.directory, self.admission, self.presence, self.open_room)

    def hello(self, name: str, key: str | None = None, ip: str = "10.0.0.1", accepts: tuple[str, ...] = ()):
        """A new session, as a hello makes it (claiming with the test identity `key` names, if given)."""
        return self.sessions.open(signed(name, key, accepts=list(accepts)), ip, Outbox(), PROOF)

    def open_room(self, client, game: str, options, private: bool, now: float) -> tuple[Room, Outbox]:
        """A room opened as create_room opens it (the caps first)."""
        rules = validated(game, options)
        self.admission.may_host(client, private)
        return self.directory.open(client, rules, private, now)


def test_bucket_refuses_when_empty_and_refills_with_the_clock_it_is_given():
    """A token bucket spends its capacity at once, then one token per 1/rate seconds of the caller's clock."""
    bucket = Bucket(rate=2.0, capacity=3, now=100.0)
    assert [bucket.take(100.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.retry_after_ms() == 500 and bucket.delay(100.0) == pytest.approx(0.5)
    assert not bucket.take(100.4) and bucket.take(100.5)
    assert not bucket.full(100.5) and bucket.full(102.0)


def test_a_window_counts_the_last_span_and_forgets_keys_with_nothing_in_it():
    """A per-day or per-hour allowance counts only what happened in the last span, says when the oldest leaves it,
    and forgets a key once nothing of it is left (the claims per address kept every address ever seen)."""
    window = Window(span=10.0)
    for at in (0.0, 4.0, 8.0):
        window.add("10.0.0.1", at)
    assert window.count("10.0.0.1", 9.0) == 3 and window.retry_after_s("10.0.0.1", 9.0) == 1.0
    assert window.count("10.0.0.1", 10.0) == 2  # the first left the window exactly at its end
    window.sweep(17.9)
    assert window.count("10.0.0.1", 17.9) == 1
    window.sweep(18.0)
    assert window.times == {} and window.count("10.0.0.1", 18.0) == 0


def test_a_claimed_name_needs_its_key_and_a_guest_gets_a_numbered_variant():
    """The first key claims a name; another key is refused name_taken with a free suggestion; a guest asking for the
    claimed name plays under a numbered variant."""
    services = Services()
    out = Outbox()
    owner, _ = services.sessions.open(signed("ann", KEY), "", out, PROOF)
    assert owner.claimed and owner.name == "ann" and [r.name for r in out.records] == ["ann"]
    with pytest.raises(Refusal) as refused:
        services.hello("ann", key="x" * 32)
    assert refused.value.code == "name_taken" and refused.value.suggestion == "ann2"
    guest, _ = services.hello("ann")
    assert guest.name == "ann2" and not guest.claimed


def test_a_signature_proves_its_key_only_for_the_server_and_nonce_it_signed():
    """A hello signed for another server id or another nonce is refused bad_signature, and claims nothing."""
    services = Services()
    for proof in (Proof("another-server", PROOF.nonce), Proof(PROOF.server, "cd" * 32)):
        with pytest.raises(Refusal) as refused:
            services.sessions.open(signed("ann", KEY, proof), "", Outbox(), PROOF)
        assert refused.value.code == "bad_signature"
    with pytest.raises(Refusal) as refused:
        services.sessions.open(signed("ann", KEY), "", Outbox(), None)  # a hello with no nonce proves nothing
    assert refused.value.code == "bad_signature" and not services.sessions.claims


def test_a_server_that_knows_its_addresses_refuses_a_hello_signed_for_another():
    """With the addresses it is reached by, a server refuses a hello signed (rightly) for another address, as a
    hostile server relaying it would send it, and takes one signed for any of its own (default port or not)."""
    services = Services()
    mine = Proof(PROOF.server, PROOF.nonce, ("wss://games.example", "ws://127.0.0.1:9000"))
    with pytest.raises(Refusal) as refused:
        services.sessions.open(signed("ann", KEY, mine, url="wss://evil.example"), "", Outbox(), mine)
    assert refused.value.code == "bad_signature" and "evil.example" in refused.value.message
    owner, _ = services.sessions.open(signed("ann", KEY, mine, url="WSS://Games.Example:443/"), "", Outbox(), mine)
    assert owner.claimed


def test_an_old_claim_moves_to_a_public_key_once_with_its_old_key():
    """A name claimed with a protocol 2 secret is asked for it (old_claim), moves to the public key that brings it,
    and from then on the old secret (with any other key) is refused name_taken."""
    services = Services()
    old_secret = "s" * 40
    services.sessions.load_claims([NameClaimed("ann", "ann", hash_token(old_secret))])
    with pytest.raises(Refusal) as refused:
        services.hello("ann", key=KEY)
    assert refused.value.code == "old_claim"
    with pytest.raises(Refusal) as refused:
        services.sessions.open(signed("ann", KEY, key="w" * 40), "", Outbox(), PROOF)
    assert refused.value.code == "name_taken"
    out = Outbox()
    owner, _ = services.sessions.open(signed("ann", KEY, key=old_secret), "", out, PROOF)
    assert owner.claimed and out.records == [NameClaimed("ann", "ann", "", False, identity_of(KEY).public_key)]
    with pytest.raises(Refusal) as refused:
        services.sessions.open(signed("ann", "m" * 32, key=old_secret), "", Outbox(), PROOF)
    assert refused.value.code == "name_taken"
    assert services.hello("ann", key=KEY)[0].claimed


def test_stored_claims_are_kept_by_todays_key_and_the_older_of_two_lookalikes_wins():
    """Claims stored under an older folding's key are found by today's key; of two stored claims that fold together
    now (vic and vıc, claimed before dotless i was folded), the older keeps the name and the younger is refused."""
    services = Services()
    older = NameClaimed("vlc", "vic", "", public_key=identity_of("first").public_key)
    younger = NameClaimed("v\u0131c", "v\u0131c", "", public_key=identity_of("second").public_key)
    services.sessions.load_claims([older, younger])
    assert services.hello("v\u0131c", key="first")[0].name == "vic"
    with pytest.raises(Refusal) as refused:
        services.hello("v\u0131c", key="second")
    assert refused.value.code == "name_taken"


def test_a_resume_token_brings_back_the_session_and_an_unknown_one_is_refused():
    """A token resumes its own session (connected again, counted online once); a wrong token is bad_token."""
    services = Services()
    client, token = services.hello("bo")
    services.sessions.went_offline(client.session, now=5.0)
    assert services.sessions.online == 0 and not client.connected
    back = services.sessions.resume(Hello(protocol=PROTOCOL_VERSION, name="x", resume=token), "10.0.0.2")
    assert back is client and client.connected and client.ip == "10.0.0.2" and services.sessions.online == 1
    with pytest.raises(Refusal) as refused:
        services.sessions.resume(Hello(protocol=PROTOCOL_VERSION, name="x", resume="nope"), "")
    assert refused.value.code == "bad_token"


def test_an_offline_session_is_forgotten_after_its_grace_unless_it_holds_a_room():
    """A session offline for SESSION_GRACE_S in no room is forgotten (and its forgetting announced); one that holds a
    seat is kept."""
    services = Services()
    idle, _ = services.hello("idle")
    seated, _ = services.hello("seated")
    seated.rooms.add("ABCDE")
    for client in (idle, seated):
        services.sessions.went_offline(client.session, now=0.0)
    services.sessions.sweep(SESSION_GRACE_S - 1)
    assert idle.session in services.sessions.clients
    services.sessions.sweep(SESSION_GRACE_S)
    assert idle.session not in services.sessions.clients and services.forgotten == [idle.session]
    assert seated.session in services.sessions.clients


def test_a_private_room_is_unknown_to_outsiders_exactly_like_a_missing_code():
    """An outsider looking up a private room's code gets the same unknown_room refusal as for a code nobody uses; its
    host finds it."""
    services = Services()
    host, _ = services.hello("host")
    outsider, _ = services.hello("outsider", ip="10.0.0.9")
    room, _ = services.open_room(host, "othello", {}, True, 0.0)
    assert services.directory.get(room.code.lower(), host) is room
    errors = []
    for code in (room.code, "ZZZZZ"):
        with pytest.raises(Refusal) as refused:
            services.directory.get(code, outsider)
        errors.append((refused.value.code, refused.value.message.replace(code, "?")))
    assert errors[0] == errors[1] and errors[0][0] == "unknown_room"


def test_new_codes_avoid_codes_in_use_elsewhere_in_a_cluster(monkeypatch):
    """With the cluster's `code_taken`, a new room never gets a code another node uses."""
    services = Services()
    drawn = iter(["AAAAA", "BBBBB", "CCCCC"])
    services.directory.code_taken = {"AAAAA", "BBBBB"}.__contains__
    monkeypatch.setattr("gamenight.server.directory.random_code", lambda: next(drawn))
    assert services.directory.new_code() == "CCCCC"


def test_a_deserted_room_with_nothing_to_wait_for_closes_promptly():
    """A room whose host has gone and whose game nobody holds a seat in gets the prompt grace; with its host
    connected it waits the ordinary grace."""
    services = Services()
    host, _ = services.hello("host")
    room, _ = services.open_room(host, "othello", {}, False, 0.0)
    assert services.directory.grace(room, in_tournament=False) > PROMPT_CLOSE_S
    services.sessions.went_offline(host.session, 1.0)
    assert services.directory.grace(room, in_tournament=False) == PROMPT_CLOSE_S


def test_code_guesses_are_rate_limited_per_address_and_forgotten_when_full_again():
    """Joins by an unknown code spend the address's allowance; past the burst they are refused rate_limited with a
    retry time; another address is not affected; a full allowance is forgotten by sweep."""
    services = Services(LobbyLimits(code_guesses_per_min=60, code_guess_burst=2))
    guesser, _ = services.hello("guesser", ip="10.0.0.1")
    other, _ = services.hello("other", ip="10.0.0.2")
    services.admission.guess(guesser, "AAAAA", 0.0)
    services.admission.guess(guesser, "AAAAB", 0.0)
    with pytest.raises(Refusal) as refused:
        services.admission.guess(guesser, "AAAAC", 0.0)
    assert refused.value.code == "rate_limited" and refused.value.retry_after_ms == 1000
    services.admission.guess(other, "AAAAC", 0.0)
    services.admission.guess(guesser, "AAAAC", 1.0)
    services.admission.sweep(10.0)
    assert services.admission.guesses.buckets == {}


def test_the_host_caps_count_every_room_an_address_hosts():
    """A person may host `rooms_per_player` rooms and an address `rooms_per_ip`, over all its sessions."""
    services = Services(LobbyLimits(rooms_per_player=2, rooms_per_ip=3))
    first, _ = services.hello("first")
    second, _ = services.hello("second")
    for _ in range(2):
        services.open_room(first, "othello", {}, True, 0.0)
    with pytest.raises(Refusal, match="you host 2"):
        services.open_room(first, "othello", {}, True, 0.0)
    services.open_room(second, "othello", {}, True, 0.0)
    with pytest.raises(Refusal, match="your address hosts 3"):
        services.open_room(second, "othello", {}, True, 0.0)


def test_the_listing_batches_changes_and_never_lists_a_private_room():
    """Changes of public rooms reach watchers once, in one batch of at most MAX_BATCH_ROOMS; a private room is never
    listed; nothing is pushed when nobody watches."""
    services = Services(LobbyLimits(rooms_per_player=0, rooms_per_ip=0, public_rooms=0))
    host, _ = services.hello("host")
    out = Outbox()
    for _ in range(MAX_BATCH_ROOMS + 5):
        room, _ = services.open_room(host, "othello", {}, False, 0.0)
        services.listing.changed(room, out)
    hidden, _ = services.open_room(host, "othello", {}, True, 0.0)
    services.listing.changed(hidden, out)
    services.listing.watch("watcher", True)
    watchers, first = services.listing.batch(services.presence.info) or (set(), None)
    assert watchers == {"watcher"} and first is not None and len(first.rooms) == MAX_BATCH_ROOMS
    _, second = services.listing.batch(services.presence.info) or (set(), None)
    assert second is not None and len(second.rooms) == 5 and not second.gone
    assert services.listing.batch(services.presence.info) is None
    page = services.listing.page(ListRooms(limit=50, offset=0))
    assert page.total == MAX_BATCH_ROOMS + 5 and hidden.code not in {s.room for s in page.rooms}


def test_presence_counts_the_games_a_person_is_playing():
    """`players` shows a person once per name, with the number of running games they sit in."""
    services = Services()
    ann, _ = services.hello("ann")
    bob, _ = services.hello("bob")
    room, _ = services.open_room(ann, "othello", {}, True, 0.0)
    for client, seat in ((ann, 0), (bob, 1)):
        room.join(client.member, Role.PLAYER, seat, None)
        client.rooms.add(room.code)
    assert room.status == RoomStatus.PLAYING
    assert {(p.name, p.playing) for p in services.presence.online()} == {("ann", 1), ("bob", 1)}


def test_a_challenge_nobody_answers_expires_and_both_sides_are_told():
    """A challenge is pending until `challenge_s` has passed; then sweep ends it `expired` for both sides."""
    services = Services(LobbyLimits(challenge_s=30.0))
    ann, _ = services.hello("ann", ip="10.0.0.1")
    bob, _ = services.hello("bob", ip="10.0.0.2", accepts=("othello",))
    services.challenges.challenge(ann, ChallengeRequest(to="bob", game="othello", options={}, seat=0), 0.0)
    out = Outbox()
    services.challenges.sweep(29.9, out)
    assert len(services.challenges.pending) == 1 and not out.sends
    services.challenges.sweep(30.0, out)
    assert not services.challenges.pending
    assert {s for send in out.sends for s in send.to} == {ann.session, bob.session}
    assert {send.message.why for send in out.sends} == {"expired"}


def test_a_server_without_a_store_refuses_history_requests():
    """With no store, history requests are refused not_allowed (never an exception)."""
    service = HistoryService(None)
    for request in (GetGame(game_id=1), Profile(name="ann")):
        with pytest.raises(Refusal) as refused:
            service.answer(request, "viewer")
        assert refused.value.code == "not_allowed"
