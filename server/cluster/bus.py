"""The nodes' bus: Redis pub/sub that survives Redis going away, and one ordered queue of what to send.

redis-py's asyncio `PubSub` does not reconnect by itself, and pub/sub drops whatever is published while a
subscriber is disconnected. The listener here reconnects with backoff, subscribes again, and then calls
`on_connected(again)` so the node re-reads what it mirrors (the directory) and resends what may have been dropped
(fresh snapshots to its rooms' members). The sender keeps one FIFO: publishes and commands leave in the order they
were queued (a new room's directory entry before the frames that name it), and one that fails for want of a
connection is retried, in place, until Redis is back; past `max_queued` waiting items the newest publishes are
dropped (counted in `dropped`; the resync after the reconnect covers them).

Batching (the forwarded path's cost, docs/performance.md): the publishes waiting at the head of the queue when the
sender gets to them (everything queued in the loop turns since its last send: an owner's flush relays frames to
many sessions of one edge at once) leave together: the messages for one channel as one batch (wire.pack_batch, one
PUBLISH), and the PUBLISHes of the different channels in one pipelined round trip. Order is kept for every
subscriber: messages for one channel stay in their order, and a message is only moved ahead of messages for *other
inboxes* (`inboxes`: channels with one subscriber each, which listens to no other inbox), never ahead of a message
for a shared channel (the directory, everyone) or of a queued command. The listener opens batches, so the node
sees the messages one by one, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from gamenight.server.cluster.access import without_password
from gamenight.server.cluster.trust import Records
from gamenight.server.cluster.wire import pack_batch, unpack_batch

log = logging.getLogger("gamenight.server.cluster")

DOWN_ERRORS = (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError, OSError)
"""What "Redis cannot be reached now" looks like (anything else from a command is a bug or a refusal)."""
MIN_BACKOFF_S = 0.05
MAX_BACKOFF_S = 1.0
MAX_QUEUED = 20_000
HOLD_S = 10.0  # a publish nobody was subscribed to receive is tried again this long (a node reconnecting)
STOP_WAIT_S = 2.0  # how long `stop` waits for its cancelled tasks to end
MAX_BATCH = 1_000  # queued publishes sent in one round trip, at most
MAX_BATCH_BYTES = 1 << 20  # ... and their bytes (a batch past this closes; the rest goes in the next round trip)

Call = Callable[[], Awaitable[Any]]


@dataclass(slots=True)
class _Publish:
    """Messages for one channel, published as one (a batch when there are several)."""

    channel: str
    parts: list[bytes]
    reach: bool
    size: int = 0


@dataclass(slots=True)
class _Sending:
    """The publishes of one round trip (taken off the queue's head; retried as they are while Redis is away)."""

    entries: list[tuple[str, bytes, bool]] = field(default_factory=list)  # channel, message (or batch), reach


def connect(url: str, password: str | None = None, ca: str | None = None) -> Redis:
    """A Redis client for a node: short timeouts, so a dead Redis is noticed in about a second.

    `password` (from a file or the environment, server/cluster/access.py) replaces any in the URL; a `rediss://`
    URL speaks TLS, its server's certificate verified (against `ca`, a PEM file, or the system's CAs) and its
    host name checked.
    """
    tls: dict[str, Any] = {}
    if url.lower().startswith("rediss://"):
        tls = {"ssl_cert_reqs": "required", "ssl_check_hostname": True, "ssl_ca_certs": ca}
    return Redis.from_url(
        url if password is None else without_password(url),
        password=password,
        socket_connect_timeout=1.0,
        socket_timeout=2.0,
        health_check_interval=2,
        retry_on_timeout=False,
        **tls,
    )


class Bus:
    """Subscribes to `channels` for as long as it runs (reconnecting), and sends queued items in order."""

    def __init__(
        self,
        redis: Redis,
        channels: list[str],
        on_message: Callable[[str, bytes], None],
        on_connected: Callable[[bool], Awaitable[None]],
        max_queued: int = MAX_QUEUED,
        inboxes: str | None = None,
        max_batch: int = MAX_BATCH,
        records: Records | None = None,
    ) -> None:
        self.redis = redis
        self.records = records  # signs every publish and checks every message received (None: neither; tests)
        self.inboxes = inboxes  # the prefix of point-to-point channels (a node's inbox), if any
        self.max_batch = max_batch
        self.channels = channels
        self.on_message = on_message
        self.on_connected = on_connected
        self.max_queued = max_queued
        self.connected = False  # the listener is subscribed now
        self.connects = 0  # times it (re)subscribed
        self.dropped = 0  # publishes dropped because too many waited for Redis
        self.published = 0  # messages handed to Redis (each of a batch counts)
        self.publishes = 0  # PUBLISH commands sent for them (a batch is one)
        self.round_trips = 0  # round trips to Redis that carried them (a pipeline is one)
        self._queue: deque[Call | _Publish | _Sending] = deque()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._held: dict[str, deque[bytes]] = {}  # channel -> publishes no subscriber received yet, in order
        self._held_since: dict[str, float] = {}

    def start(self) -> None:
        """Start listening and sending (returns at once)."""
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._listen()),
            loop.create_task(self._send()),
            loop.create_task(self._retry()),
        ]

    async def stop(self) -> None:
        """Stop both tasks (what is still queued is not sent), waiting at most STOP_WAIT_S for them: a task whose
        Redis call does not end on cancellation (a client library swallowing it mid-command) is left behind,
        logged, rather than holding the node's shutdown forever."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=STOP_WAIT_S)
            for task in pending:
                log.warning("cluster bus task %s did not stop when cancelled; left behind", task.get_name())
        self._tasks = []

    # -- sending ------------------------------------------------------------------------------------------
    def publish(self, channel: str, data: bytes, reach: bool = False) -> None:
        """Queue one publish (sent after everything queued before it, possibly in a batch with others).

        With `reach`, a publish no subscriber received (the node on that channel is reconnecting) is held and
        tried again, with everything after it for that channel, for up to HOLD_S (then dropped and counted).
        """
        if len(self._queue) >= self.max_queued:
            self.dropped += 1
            return
        self._queue.append(_Publish(channel, [data], reach, len(data)))
        self._wake.set()

    def _direct(self, channel: str) -> bool:
        """True for a point-to-point channel (an inbox): its messages may pass other inboxes' messages."""
        return self.inboxes is not None and channel.startswith(self.inboxes)

    def _gather(self) -> _Sending:
        """Take the publishes at the queue's head off it, as one round trip's worth (put back at the head as a
        `_Sending`, so that a failed send is retried as it is): one entry per channel, in an order that keeps
        every subscriber's order (see the module's docstring). Publishes for a channel whose earlier messages are
        held join them there."""
        queue = self._queue
        entries: list[_Publish] = []
        open_: dict[str, _Publish] = {}  # channels whose entry may still take messages
        seen: set[str] = set()
        count = size = 0
        while queue and count < self.max_batch and size < MAX_BATCH_BYTES:
            item = queue[0]
            if not isinstance(item, _Publish):
                break
            entry = open_.get(item.channel)
            if entry is None:
                if item.channel in seen:
                    break  # this channel again past a shared channel's message: in the next round trip
                seen.add(item.channel)
                entry = _Publish(item.channel, [], False)
                entries.append(entry)
                direct = self._direct(item.channel)  # an inbox's entry leaves other inboxes' entries open
                open_ = {c: e for c, e in open_.items() if direct and self._direct(c)}
                open_[item.channel] = entry
            queue.popleft()
            entry.parts.extend(item.parts)
            entry.reach = entry.reach or item.reach
            count += 1
            size += item.size
        sending = _Sending()
        for entry in entries:
            held = self._held.get(entry.channel)
            if entry.reach and held is not None:
                held.extend(entry.parts)
                continue
            sending.entries.append((entry.channel, pack_batch(entry.parts), entry.reach))
            self.published += len(entry.parts)
        queue.appendleft(sending)
        return sending

    async def _publish_all(self, sending: _Sending) -> None:
        """One round trip: every entry's PUBLISH (pipelined when there are several); unreached ones are held."""
        entries = sending.entries
        if not entries:
            return
        if len(entries) == 1:
            receivers = [await self.redis.publish(entries[0][0], self._signed(entries[0][0], entries[0][1]))]
        else:
            async with self.redis.pipeline(transaction=False) as pipe:
                for channel, data, _reach in entries:
                    pipe.publish(channel, self._signed(channel, data))
                receivers = await pipe.execute()
        self.publishes += len(entries)
        self.round_trips += 1
        now = asyncio.get_running_loop().time()
        for (channel, data, reach), count in zip(entries, receivers, strict=True):
            if reach and not count:
                held = self._held.get(channel)
                if held is not None:
                    held.append(data)
                else:
                    self._held[channel] = deque([data])
                    self._held_since[channel] = now

    async def _retry(self) -> None:
        """Try held publishes again, in order per channel, until someone receives them or HOLD_S passes."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0.05)
            for channel in list(self._held):
                held = self._held.get(channel)
                if held is None:
                    continue  # handed over meanwhile (`take_held`)
                try:
                    while held and await self.redis.publish(channel, self._signed(channel, held[0])):
                        held.popleft()
                except DOWN_ERRORS:
                    continue
                if self._held.get(channel) is not held:
                    continue
                if not held:
                    del self._held[channel], self._held_since[channel]
                elif loop.time() - self._held_since[channel] > HOLD_S:
                    self.dropped += len(held)
                    log.warning("dropped %d messages for %s: nobody subscribed for %.0f s", len(held), channel, HOLD_S)
                    del self._held[channel], self._held_since[channel]

    def _signed(self, channel: str, data: bytes) -> bytes:
        """A message (or batch) as it is published: signed for its channel (held ones are kept unsigned)."""
        return data if self.records is None else self.records.sign(channel, data)

    def call(self, call: Call, droppable: bool = False) -> None:
        """Queue any Redis work (a coroutine factory); it runs after everything queued before it."""
        if droppable and len(self._queue) >= self.max_queued:
            self.dropped += 1
            return
        self._queue.append(call)
        self._wake.set()

    def held_channels(self) -> list[str]:
        """The channels with publishes held (nobody subscribed to them when they were sent)."""
        return list(self._held)

    def take_held(self, channel: str) -> list[bytes]:
        """Stop retrying the publishes held for `channel` (its node is dead) and hand them over, in order (the
        messages of a batch one by one)."""
        held = self._held.pop(channel, None)
        self._held_since.pop(channel, None)
        messages: list[bytes] = []
        for data in held or ():
            try:
                messages.extend(unpack_batch(data))
            except ValueError:
                log.error("a broken batch held for %s; dropped", channel)
        return messages

    def pending(self) -> int:
        """Items waiting to be sent."""
        return len(self._queue)

    async def drain(self) -> None:
        """Wait until everything queued so far has been sent (tests, shutdown)."""
        while self._queue:
            await asyncio.sleep(0.01)

    async def _send(self) -> None:
        """Send the queue's items in order; one that finds Redis away is retried (with backoff) until it goes."""
        delay = MIN_BACKOFF_S
        while True:
            if not self._queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            head = self._queue[0]
            try:
                if isinstance(head, _Publish | _Sending):
                    head = head if isinstance(head, _Sending) else self._gather()
                    await self._publish_all(head)
                else:
                    await head()
            except DOWN_ERRORS as exc:
                log.debug("redis away while sending (%s); retrying", exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_S)
                continue
            except RedisError:
                log.exception("redis refused a cluster command; skipped")
            except Exception:
                log.exception("bug in a cluster command; skipped")
            delay = MIN_BACKOFF_S
            if self._queue and self._queue[0] is head:
                self._queue.popleft()

    # -- listening ----------------------------------------------------------------------------------------
    def _hand_over(self, channel: str, data: bytes) -> None:
        """One received message to the node (a batch's messages one by one, in order), if a node signed it."""
        if self.records is not None:
            verified = self.records.verify(channel, data)
            if verified is None:
                return
            data = verified
        try:
            messages = unpack_batch(data)
        except ValueError:
            log.error("a broken batch on %s; dropped", channel)
            return
        for message in messages:
            try:
                self.on_message(channel, message)
            except Exception:
                log.exception("bug while handling a cluster message")

    async def _listen(self) -> None:
        """Subscribe, tell the node, hand every message over; on a lost connection, back off and start again."""
        delay = MIN_BACKOFF_S
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(*self.channels)
                self.connected = True
                self.connects += 1
                await self.on_connected(self.connects > 1)
                delay = MIN_BACKOFF_S
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is None or message.get("type") != "message":
                        continue
                    channel = message["channel"]
                    self._hand_over(channel.decode() if isinstance(channel, bytes) else channel, message["data"])
            except DOWN_ERRORS as exc:
                if self.connected:
                    log.warning("lost redis (%s); reconnecting", exc)
            except Exception:
                log.exception("bug in the cluster listener; subscribing again")
            finally:
                self.connected = False
                with contextlib.suppress(Exception):  # the connection is gone already
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF_S)
