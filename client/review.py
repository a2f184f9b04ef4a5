"""A finished game's review as the review screen shows it: the replay, and the server's analysis of every move.

Plain data, no Textual: `Review` wraps a `Replay` (the record, its frames, the step shown) and adds the `analysis`
message once it arrives (docs/review.md): each move's label and sign, the best move and the values before and after
it, the first seat's win percentage over the game for the graph, the clock time each move took, and where the
next and previous labelled moves are. A Tron game's review is a `TronReview`: the server sends each tick's
territory per rider instead (docs/review.md, "Tron"); its graph is the first rider's lead in squares, and `n` / `p`
jump to the ticks where the lead changed hands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gamenight.client.replay import Replay
from gamenight.protocol.messages import Analysis, AnalysisProgress, Queued

REVIEWED_GAMES = frozenset({"othello", "connect4", "pentago", "tron"})
"""The games the server reviews (turn-based games with an AI move by move, Tron by territory)."""
SIGNS = {"blunder": "??", "mistake": "?", "inaccuracy": "?!"}
"""Each label's sign, as annotated games write it."""


class Review:
    """A game being reviewed: its replay and, once it arrives, its analysis (see the module docstring)."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.game_id = int(replay.game_id) if isinstance(replay.game_id, int) else -1
        self.moves: list[Mapping[str, Any]] = []  # the analysis of each move, in order (empty until it arrives)
        self.summary: list[Mapping[str, Any]] = []  # one entry per seat
        self.progress: tuple[int, int] | None = None  # positions assessed, of all, while it runs
        self.ahead: int | None = None  # analyses before this one in the server's queue

    @property
    def analysed(self) -> bool:
        """True once the analysis arrived."""
        return bool(self.moves)

    def apply(self, message: Analysis | AnalysisProgress | Queued) -> bool:
        """Take in the server's news about this game's review; False if it is about another game."""
        if message.game_id != self.game_id:
            return False
        match message:
            case Analysis():
                moves = [move for move in message.moves if isinstance(move, Mapping)]
                self.moves = moves if len(moves) == len(self.replay.moves) else []
                self.summary = [seat for seat in message.summary if isinstance(seat, Mapping)]
                self.progress = None
            case AnalysisProgress():
                self.progress = (message.done, message.total) if message.waiting else None
            case Queued():
                self.ahead = message.ahead
        return True

    # -- one move ---------------------------------------------------------------------------------------------------
    def move(self, step: int) -> Mapping[str, Any] | None:
        """The analysis of move number `step` (1-based: the move that led to step `step`), if known."""
        return self.moves[step - 1] if 0 < step <= len(self.moves) else None

    def sign(self, step: int) -> str:
        """Move `step`'s sign ("??", "?", "?!") or ""."""
        move = self.move(step)
        return SIGNS.get(str(move.get("label")), "") if move else ""

    def annotated_moves(self) -> list[str]:
        """The moves as written, each with its sign ("e??")."""
        return [text + self.sign(step) for step, text in enumerate(self.replay.moves, start=1)]

    def comment(self, step: int) -> str:
        """What the review says of move `step`: its label, the value before and after, the best move there."""
        move = self.move(step)
        if move is None:
            return ""
        label = move.get("label")
        said = f"{move.get('played')}{self.sign(step)}" + (f" — a {label}" if label else "")
        before, after = _text(move.get("eval_before")), _text(move.get("eval_after"))
        best = move.get("best")
        lines = [said, f"before: {before} · after: {after}"]
        if best is not None and best != move.get("played"):
            lines.append(f"best: {best} ({_text(move.get('best_eval'))})")
        return "\n".join(lines)

    def position_value(self, step: int) -> str:
        """The value of the position at step `step`, as people read it ("black +6", "red 61%")."""
        if not self.moves:
            return ""
        if step < len(self.moves):
            return _text(self.moves[step].get("eval_before"))
        return _text(self.moves[-1].get("eval_after"))

    def move_ms(self, step: int) -> int | None:
        """The clock time move `step` took, for games played with a clock."""
        timing = self.replay.record.get("clock")
        spent = timing.get("move_ms") if isinstance(timing, Mapping) else None
        if isinstance(spent, list) and 0 < step <= len(spent) and isinstance(spent[step - 1], int):
            return int(spent[step - 1])
        return None

    # -- the whole game ---------------------------------------------------------------------------------------------
    def graph(self) -> list[float]:
        """The first seat's win percentage (0-100) at every position, start to end (empty until analysed)."""
        if not self.moves:
            return []
        values = [move.get("eval_before") for move in self.moves] + [self.moves[-1].get("eval_after")]
        return [50 + 50 * _chance(value) for value in values]

    def labelled(self, step: int, direction: int) -> int | None:
        """The step of the next (`direction` 1) or previous (-1) labelled move after / before `step`."""
        steps = range(step + 1, len(self.moves) + 1) if direction > 0 else range(step - 1, 0, -1)
        return next((each for each in steps if self.sign(each)), None)

    def status_text(self) -> str:
        """How the analysis is coming: queued, so many positions of so many, or done."""
        if self.analysed:
            labelled = sum(bool(self.sign(step)) for step in range(1, len(self.moves) + 1))
            return f"Analysed: {labelled} labelled moves (n / p jump between them)"
        if self.progress is not None:
            done, total = self.progress
            return f"Analysing… {done} of {total} positions"
        if self.ahead:
            return f"Queued behind {self.ahead} other analyses"
        return "Waiting for the analysis…"

    def seat_text(self, seat: Mapping[str, Any]) -> str:
        """One seat's summary: its accuracy and labels, "88.9% · 4 ?! · 2 ? · 1 ??"."""
        return (
            f"{seat.get('accuracy', '?')}% · {seat.get('inaccuracies', 0)} ?! · "
            f"{seat.get('mistakes', 0)} ? · {seat.get('blunders', 0)} ??"
        )


class TronReview(Review):
    """A Tron game's review: each tick's territory per rider (the squares it reaches first), the first rider's lead
    over the game, and the ticks where the lead changed hands."""

    def territory(self, step: int) -> list[int]:
        """Each rider's squares at step `step` (after tick `step`; empty until analysed)."""
        if not self.moves:
            return []
        entry = self.moves[step - 1] if step else self.moves[0]
        counts = entry.get("territory_after" if step else "territory_before")
        return [int(count) for count in counts if isinstance(count, int)] if isinstance(counts, list) else []

    def lead(self, step: int) -> int:
        """The first rider's squares less the best other rider's at step `step`."""
        counts = self.territory(step)
        return counts[0] - max(counts[1:]) if len(counts) > 1 else 0

    def leader(self, step: int) -> int | None:
        """The rider with strictly the most squares at step `step`, if one has."""
        counts = self.territory(step)
        best = max(counts, default=0)
        return counts.index(best) if counts.count(best) == 1 else None

    def comment(self, step: int) -> str:
        """Nothing beyond who leads (`position_value`): the replay's status line names the tick's moves."""
        return ""

    def lead_text(self, step: int) -> str:
        """ "player 1 leads by 12 squares", or "even"."""
        leader = self.leader(step)
        if leader is None:
            return "even"
        counts = self.territory(step)
        margin = counts[leader] - max(count for seat, count in enumerate(counts) if seat != leader)
        return f"{self.replay.session.label(leader)} leads by {margin} square{'s' if margin != 1 else ''}"

    def position_value(self, step: int) -> str:
        """Who leads at step `step`."""
        return self.lead_text(step) if self.moves else ""

    def graph(self) -> list[float]:
        """The first rider's lead in squares at every position, start to end (empty until analysed)."""
        return [float(self.lead(step)) for step in range(len(self.moves) + 1)] if self.moves else []

    def labelled(self, step: int, direction: int) -> int | None:
        """The step of the next (1) or previous (-1) tick after / before `step` where the leader changed."""
        steps = range(step + 1, len(self.moves) + 1) if direction > 0 else range(step - 1, 0, -1)
        return next((each for each in steps if self.changed(each)), None)

    def changed(self, step: int) -> bool:
        """True if tick `step` changed who leads."""
        return 0 < step <= len(self.moves) and self.leader(step) != self.leader(step - 1)

    def status_text(self) -> str:
        """How the analysis is coming, or how often the lead changed."""
        if self.analysed:
            changes = sum(self.changed(step) for step in range(1, len(self.moves) + 1))
            return f"Analysed: the lead changed {changes} times (n / p jump between them)"
        if self.progress is not None:
            done, total = self.progress
            return f"Counting territory… {done} of {total} parts of up to 200 ticks"
        return super().status_text()

    def seat_text(self, seat: Mapping[str, Any]) -> str:
        """One rider's summary: "41.5 squares on average · ahead after 12 of 40 ticks"."""
        return (
            f"{seat.get('mean_territory', '?')} squares on average · "
            f"ahead after {seat.get('ticks_ahead', 0)} of {len(self.moves)} ticks"
        )


def review_of(replay: Replay) -> Review:
    """The review of a finished game: a `TronReview` for Tron, else a `Review`."""
    return TronReview(replay) if replay.game == "tron" else Review(replay)


def summary_rows(review: Review) -> Sequence[tuple[int, str]]:
    """Per seat: its number and its summary (`Review.seat_text`)."""
    return [(int(seat.get("seat", 0)), review.seat_text(seat)) for seat in review.summary]


def _text(value: object) -> str:
    """A value's text for people, "?" if missing."""
    return str(value.get("text", "?")) if isinstance(value, Mapping) else "?"


def _chance(value: object) -> float:
    """A value's first-seat win chance in [-1, 1] (0 if missing)."""
    chance = value.get("chance") if isinstance(value, Mapping) else None
    return max(-1.0, min(1.0, float(chance))) if isinstance(chance, (int, float)) else 0.0
