"""The nodes' bus: Redis pub/sub that survives Redis going away, and one ordered queue of what to send.

redis-py's asyncio `PubSub` does not reconnect by itself, and pub/sub drops whatever is published while a
subscriber is disconnected. The listener here reconnects with backoff, subscribes again, and then calls
`on_connected(again)` so the node re-reads what it mirrors (the directory) and resends what may have been dropped
(fresh snapshots to its rooms' members). The sender keeps one FIFO: publishes and commands leave in the order they
were queued (a new room's directory entry before the frames that name it), and one that fails for want of a
connection is retried, in place, until Redis is back; past `max_queued` waiting items the oldest publishes are
dropped (counted in `dropped`; the resync after the reconnect covers them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger("gamenight.server.cluster")

DOWN_ERRORS = (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError, OSError)
"""What "Redis cannot be reached now" looks like (anything else from a command is a bug or a refusal)."""
MIN_BACKOFF_S = 0.05
MAX_BACKOFF_S = 1.0
MAX_QUEUED = 20_000
HOLD_S = 10.0  # a publish nobody was subscribed to receive is tried again this long (a node reconnecting)

Call = Callable[[], Awaitable[Any]]


def connect(url: str) -> Redis:
    """A Redis client for a node: short timeouts, so a dead Redis is noticed in about a second."""
    return Redis.from_url(
        url, socket_connect_timeout=1.0, socket_timeout=2.0, health_check_interval=2, retry_on_timeout=False
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
    ) -> None:
        self.redis = redis
        self.channels = channels
        self.on_message = on_message
        self.on_connected = on_connected
        self.max_queued = max_queued
        self.connected = False  # the listener is subscribed now
        self.connects = 0  # times it (re)subscribed
        self.dropped = 0  # publishes dropped because too many waited for Redis
        self._queue: deque[Call] = deque()
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
        """Stop both tasks (what is still queued is not sent)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    # -- sending ------------------------------------------------------------------------------------------
    def publish(self, channel: str, data: bytes, reach: bool = False) -> None:
        """Queue one publish (sent after everything queued before it).

        With `reach`, a publish no subscriber received (the node on that channel is reconnecting) is held and
        tried again, with everything after it for that channel, for up to HOLD_S (then dropped and counted).
        """
        self.call(lambda: self._publish(channel, data, reach), droppable=True)

    async def _publish(self, channel: str, data: bytes, reach: bool) -> None:
        held = self._held.get(channel)
        if reach and held is not None:
            held.append(data)
            return
        receivers = await self.redis.publish(channel, data)
        if reach and not receivers:
            self._held[channel] = deque([data])
            self._held_since[channel] = asyncio.get_running_loop().time()

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
                    while held and await self.redis.publish(channel, held[0]):
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
        """Stop retrying the publishes held for `channel` (its node is dead) and hand them over, in order."""
        held = self._held.pop(channel, None)
        self._held_since.pop(channel, None)
        return list(held) if held else []

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
            call = self._queue[0]
            try:
                await call()
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
            if self._queue and self._queue[0] is call:
                self._queue.popleft()

    # -- listening ----------------------------------------------------------------------------------------
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
                    try:
                        self.on_message(channel.decode() if isinstance(channel, bytes) else channel, message["data"])
                    except Exception:
                        log.exception("bug while handling a cluster message")
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
