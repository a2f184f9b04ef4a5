"""The AI workers' fair queue on its own (server/fair_queue.py): no event loop, no pool, no sockets."""

from __future__ import annotations

from gamenight.server.fair_queue import AiQueue


def test_a_free_worker_is_taken_at_once_and_a_busy_pool_queues_the_turn():
    """With a worker free a turn starts at once; with all busy it waits and gets the first worker released."""
    queue = AiQueue(workers=2)
    assert queue.enter("A", exhibition=False) is None and queue.enter("B", exhibition=False) is None
    waiter = queue.enter("C", exhibition=False)
    assert waiter is not None and not waiter.granted
    assert queue.release("A", exhibition=False) == [waiter] and waiter.granted
    assert queue.running == 2 and queue.by_room == {"B": 1, "C": 1}


def test_people_go_before_exhibitions_then_the_room_with_fewest_workers():
    """A released worker goes to a room where people play before an all-AI room, and among those to the room
    using the fewest workers, then the oldest turn."""
    queue = AiQueue(workers=3)
    for room in ("busy", "busy", "other"):
        assert queue.enter(room, exhibition=False) is None
    show = queue.enter("show", exhibition=True)
    busy_again = queue.enter("busy", exhibition=False)
    fresh = queue.enter("fresh", exhibition=False)
    assert [queue.release("other", exhibition=False)] == [[fresh]]  # "fresh" holds none, "busy" two
    assert queue.release("busy", exhibition=False) == [busy_again]  # people before the exhibition
    assert show is not None and not show.granted


def test_all_ai_rooms_never_hold_every_worker():
    """Exhibitions together take at most workers - 1 (one with a single worker), so a person's game always finds
    a worker soon."""
    queue = AiQueue(workers=3)
    assert queue.enter("x1", exhibition=True) is None and queue.enter("x2", exhibition=True) is None
    third = queue.enter("x3", exhibition=True)
    assert third is not None and queue.running == 2
    assert queue.enter("people", exhibition=False) is None  # the last worker stays theirs
    single = AiQueue(workers=1)
    assert single.enter("x", exhibition=True) is None and single.enter("y", exhibition=True) is not None


def test_a_turn_that_gives_up_after_its_grant_hands_its_worker_back():
    """A waiter granted a worker and then given up (its task cancelled) reports the grant, so the worker is
    released to the next turn instead of being lost."""
    queue = AiQueue(workers=1)
    assert queue.enter("A", exhibition=False) is None
    first, second = queue.enter("B", exhibition=False), queue.enter("C", exhibition=False)
    assert first is not None and second is not None
    assert queue.leave(second) is False and queue.waiting == [first]
    queue.release("A", exhibition=False)
    assert queue.leave(first) is True
    assert queue.release("B", exhibition=False) == [] and queue.running == 0
