"""The lobby of protocol version 2 in the client: counts and the first page from the welcome, further pages
from list_rooms, batched pushes, and the lobby screen's subscription and paging (Pilot, scripted connection)."""

from __future__ import annotations

from textual.widgets import DataTable

from gamenight.client.messages import LeaveRoom
from gamenight.client.state import ClientState
from gamenight.protocol.messages import CreateRoom, Join, Leave, ListRooms, LobbyWatch, Message
from tests.client.conftest import wait_for
from tests.client.recorded import FakeConnection, answer, fake_app, room, room_info, welcome, wire
from tests.client.test_flows import SIZE, othello_server
from tests.peer import Peer


def codes(start: int, count: int) -> list[str]:
    """Room codes R0000, R0001, ... (the listing's order)."""
    return [f"R{n:04d}" for n in range(start, start + count)]


def counts(rooms: int, online: int = 3) -> dict:
    """A counts map with `rooms` waiting Othello rooms."""
    return {"rooms": rooms, "online": online, "games": {"othello": {"waiting": rooms}}}


def lobby_welcome(listed: int, first_page: int = 50) -> Message:
    """A welcome from a server listing `listed` rooms, carrying the first page of them."""
    return welcome([room(c) for c in codes(0, min(listed, first_page))], counts=counts(listed))


def page(offset: int, count: int, total: int) -> Message:
    """A `rooms` reply: `count` rooms from `offset` of a listing of `total`."""
    return wire("rooms", rooms=[room(c) for c in codes(offset, count)], total=total, offset=offset)


def test_welcome_gives_the_first_page_and_the_total_then_pages_add_up():
    """The welcome's counts say how many rooms there are; each further page adds to the list until all are in,
    and a page from offset 0 starts the list again."""
    state = ClientState("ann")
    state.apply(lobby_welcome(120))
    lobby = state.lobby
    assert len(lobby.rooms) == 50 and lobby.total == 120 and lobby.has_more and lobby.next_offset == 50
    state.apply(page(50, 50, 120))
    assert len(lobby.rooms) == 100 and lobby.has_more and lobby.next_offset == 100
    state.apply(page(100, 20, 120))
    assert len(lobby.rooms) == 120 and not lobby.has_more
    state.apply(page(0, 50, 120))
    assert len(lobby.rooms) == 50 and lobby.has_more


def test_a_batched_push_adds_changes_and_removes_rooms():
    """A `lobby` push updates the rooms it carries, drops the rooms gone and takes the new counts; the reply to
    lobby_watch only brings the counts."""
    state = ClientState("ann")
    state.apply(lobby_welcome(3))
    push = wire(
        "lobby",
        rooms=[room("R0001", status="playing"), room("NEW01")],
        gone=["R0000"],
        counts={"rooms": 3, "online": 7, "games": {"othello": {"waiting": 2, "playing": 1}}},
    )
    assert state.apply(push).lobby
    lobby = state.lobby
    assert set(lobby.rooms) == {"R0001", "R0002", "NEW01"} and lobby.rooms["R0001"].status == "playing"
    assert lobby.total == 3 and lobby.counts.online == 7 and lobby.counts.of("othello", "playing") == 1
    state.apply(wire("lobby", id=4, counts=counts(9), watching=True))
    assert set(lobby.rooms) == {"R0001", "R0002", "NEW01"} and lobby.total == 9


def test_a_welcome_without_counts_lists_what_it_carries():
    """A welcome with no counts (an older server) counts the rooms it lists, and offers no more pages."""
    state = ClientState("ann")
    state.apply(welcome([room(c) for c in codes(0, 4)]))
    assert state.lobby.total == 4 and not state.lobby.has_more


def lobby_server(listed: int):
    """A scripted server listing `listed` rooms: pages for list_rooms, the Othello room flow for the rest."""

    def respond(request: Message) -> list[Message]:
        if isinstance(request, ListRooms):
            count = max(0, min(request.limit, listed - request.offset))
            return [answer(page(request.offset, count, listed))]
        if isinstance(request, LobbyWatch):
            return [answer(wire("lobby", counts=counts(listed), watching=request.on))]
        return othello_server(request)

    return respond


async def test_the_lobby_watches_while_shown_and_stops_in_a_room():
    """Once welcomed, the lobby screen asks for the pushes and a first page; entering a room turns the pushes
    off, and leaving it turns them on again with a fresh first page."""
    server = FakeConnection(lobby_server(3), on_connect=[lobby_welcome(3)])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: server.sent_of(LobbyWatch), "the subscription")
        assert [w.on for w in server.sent_of(LobbyWatch)] == [True]
        assert server.sent_of(ListRooms)[-1].offset == 0
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None, "the room")
        await wait_for(pilot, lambda: len(server.sent_of(LobbyWatch)) == 2, "the pushes turned off")
        assert server.sent_of(LobbyWatch)[-1].on is False
        pages_before = len(server.sent_of(ListRooms))
        app.post_message(LeaveRoom())
        await wait_for(pilot, lambda: server.sent_of(Leave), "the leave")
        await wait_for(pilot, lambda: app.screen is app.lobby_screen, "back in the lobby")
        await wait_for(pilot, lambda: len(server.sent_of(LobbyWatch)) == 3, "the pushes on again")
        assert server.sent_of(LobbyWatch)[-1].on is True
        await wait_for(pilot, lambda: len(server.sent_of(ListRooms)) > pages_before, "a fresh first page")


async def test_the_lobby_pages_with_m_and_at_the_last_row():
    """With more rooms listed than loaded, `m` loads the next page and moving the cursor to the last row loads
    the one after; the table grows with each page and the intro says how many are shown."""
    server = FakeConnection(lobby_server(120), on_connect=[lobby_welcome(120)])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: server.sent_of(LobbyWatch), "the subscription")
        table = app.lobby_screen.query_one("#rooms", DataTable)
        await wait_for(pilot, lambda: table.row_count == 50, "the first page")
        assert "120 room(s) listed, 50 shown" in str(app.lobby_screen.query_one("#lobby-intro").render())
        await pilot.press("m")
        await wait_for(pilot, lambda: table.row_count == 100, "the second page")
        assert [r.offset for r in server.sent_of(ListRooms)][-1] == 50
        table.move_cursor(row=table.row_count - 1)
        await wait_for(pilot, lambda: table.row_count == 120, "the last page")
        assert [r.offset for r in server.sent_of(ListRooms)][-1] == 100
        await pilot.press("m")
        await pilot.pause()
        assert [r.offset for r in server.sent_of(ListRooms)][-1] == 100  # nothing more to ask for


async def test_the_lobby_table_follows_batched_pushes():
    """A batched push adds and changes rooms in the table and removes the rooms gone, all at once."""
    server = FakeConnection(lobby_server(2), on_connect=[lobby_welcome(2)])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        table = app.lobby_screen.query_one("#rooms", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "the first page")
        server.push(wire("lobby", rooms=[room("NEW01"), room("NEW02")], gone=["R0000"], counts=counts(3)))
        await wait_for(pilot, lambda: table.row_count == 3, "the batch applied")
        assert set(app.model.lobby.rooms) == {"R0001", "NEW01", "NEW02"}
        server.push(room_info("R0001", status="closed"))  # a room push (a room's members get them) still counts
        await wait_for(pilot, lambda: table.row_count == 2, "the closed room gone")


async def test_the_lobby_shows_rooms_another_player_opens_on_a_real_server(make_app, url):
    """Against a real server the lobby subscribes after its welcome: a room someone else opens appears in its
    table through a batched push, and leaves it when that player's connection drops."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.lobby_screen.watching and app.lobby_watch, "the subscription")
        other = await Peer.connect(url, "bob")
        code = (await other.request(CreateRoom, game="connect4", options={})).room
        await other.request(Join, room=code, seat=0)
        table = app.lobby_screen.query_one("#rooms", DataTable)
        await wait_for(pilot, lambda: code in app.model.lobby.rooms and table.row_count == 1, "bob's room")
        assert app.model.lobby.counts is not None and app.model.lobby.counts.online == 2
        await other.close()
        await wait_for(pilot, lambda: code not in app.model.lobby.rooms and table.row_count == 0, "bob's room gone")
