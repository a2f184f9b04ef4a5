"""Game review's I/O side (issue 36): hands the review queue's positions to the AI workers, below every AI turn.

server/review.py decides what to assess; this runs it. A position is one job in the AI process pool
(server/ai/analysis.py `assess_plain`, about the review budget long), and one starts only when the server's fair
queue says so (`may_start`: no AI turn waits for a worker, and one worker stays free for the next), so a live
game's AI never queues behind a review: at worst, on a one-worker server, its turn waits for the one position
in flight. The runner wakes when a review is asked for and whenever a worker is freed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from typing import Any

from gamenight.server.outbox import Outbox
from gamenight.server.review import ReviewService, Work

log = logging.getLogger("gamenight.server")


def assess_work(work: Work) -> dict[str, Any]:
    """In a worker process: the value of `work`'s position and its best move (the event loop never loads the AI)."""
    from gamenight.server.ai.analysis import assess_plain

    return assess_plain(work.game, work.options, work.moves, work.ply, work.budget_ms)


class ReviewRunner:
    """Runs the review queue's positions in the AI pool when the pool's owner allows (see the module docstring)."""

    def __init__(
        self,
        service: ReviewService,
        *,
        pool: Callable[[], Executor],
        may_start: Callable[[], bool],
        take: Callable[[], None],
        release: Callable[[], None],
        deliver: Callable[[Outbox], None],
        spawn: Callable[[Coroutine[Any, Any, None]], object],
        grace_ms: int,
    ) -> None:
        self.service = service
        self.pool, self.may_start, self.take, self.release = pool, may_start, take, release
        self.deliver, self.spawn, self.grace_ms = deliver, spawn, grace_ms
        self.woken = asyncio.Event()

    def wake(self) -> None:
        """Look for work to start (a review was asked for, or a worker was freed)."""
        self.woken.set()

    async def run(self) -> None:
        """Forever: start as many positions as the pool's owner allows, then sleep until woken."""
        while True:
            await self.woken.wait()
            self.woken.clear()
            while self.may_start() and (work := self.service.next_work()) is not None:
                self.take()
                self.spawn(self._assess(work))

    async def _assess(self, work: Work) -> None:
        """Assess one position in a worker and hand the result (or the failure) to the review service."""
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(self.pool(), assess_work, work)
            value = await asyncio.wait_for(future, (work.budget_ms + self.grace_ms) / 1000)
            out = self.service.done(work, value)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("review of game %d failed at ply %d (%s)", work.game_id, work.ply, type(exc).__name__)
            out = self.service.failed(work)
        finally:
            self.release()
        self.deliver(out)
