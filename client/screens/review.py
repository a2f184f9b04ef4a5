"""The review screen (issue 36): a finished game move by move, as the replay viewer draws it, with the server's
analysis: each move's sign (?! ? ??) and the best move, the value of each position, a graph of the first seat's
win chance over the game, each seat's accuracy, and the time each move took.

Opened from the game-over dialog or the history (`OpenReview`); the app fetches the game, opens this screen and
sends `analyse`; the analysis (or its progress) reaches it as `ModelChanged.changes.review`. Leaving before the
analysis came makes the app cancel the request.

A Tron game opens a `TronReviewScreen`: the replay tick by tick with every empty square shaded in the colour of
the rider that reaches it first (the arena computes it for the shown tick, `TronGrid.territory`), each rider's
count of squares there, and the server's per-tick counts as a graph of the first rider's lead.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Label, Sparkline, Static

from gamenight.client.messages import ModelChanged
from gamenight.client.plain import plain
from gamenight.client.review import Review, TronReview, summary_rows
from gamenight.client.screens.history import MOVES_WIDTH, ReplayScreen
from gamenight.client.state import ClientState
from gamenight.client.widgets.panel import moves_columns, moves_line_of, seat_chip
from gamenight.client.widgets.tron import TronArena


class ReviewScreen(ReplayScreen):
    """One finished game with its analysis; the replay viewer's keys, and `n` / `p` for the next / previous
    labelled move."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "labelled(1)", "Next mistake"),
        Binding("p", "labelled(-1)", "Previous mistake"),
    ]

    summary_heading = "Accuracy"

    def __init__(self, model: ClientState, review: Review) -> None:
        super().__init__(model, review.replay)
        self.review = review

    def above_clocks(self) -> ComposeResult:
        """The accuracy summary, the evaluation graph, where the shown move is on it, and the analysis's progress."""
        yield Label(self.summary_heading, classes="side-heading")
        yield Static(id="review-summary")
        yield Sparkline([], id="review-graph")
        yield Static(id="review-cursor")
        yield Static(id="review-status")

    def below_step(self) -> ComposeResult:
        """The shown move's comment: its sign, values and the best move."""
        yield Static(id="review-comment")

    def heading(self) -> str:
        """The screen's title: "Review of game 12 · Othello"."""
        return f"Review of game {self.review.game_id} · {self.model.lobby.title(self.replay.game)}"

    def on_mount(self) -> None:
        """What is known of the analysis (Textual calls the replay viewer's own `on_mount` too: the title and the
        start position)."""
        self.show_analysis()

    def on_model_changed(self, event: ModelChanged) -> None:
        """News of this game's analysis: show it."""
        news = event.changes.review
        if news is not None and self.review.apply(news):
            self.show_analysis()

    def show_analysis(self) -> None:
        """The graph, the seats' summary, the status line, and the shown step's comment."""
        review = self.review
        self.query_one("#review-graph", Sparkline).data = review.graph()
        summary = Text()
        for seat, text in summary_rows(review):
            if summary:
                summary.append("\n")
            summary.append_text(seat_chip(self.replay.game, seat))
            summary.append(" ")
            summary.append_text(plain(text))
        self.query_one("#review-summary", Static).update(summary)
        self.query_one("#review-status", Static).update(plain(review.status_text(), style="italic"))
        self.show_step()

    def show_step(self) -> None:
        """The replay's step, and the review's comment on the move that led to it."""
        super().show_step()
        review, step = self.review, self.replay.step
        self._show_cursor()
        comment = Text()
        if review.analysed:
            comment.append_text(plain(f"position: {review.position_value(step)}", style="bold"))
            said = review.comment(step)
            if said:
                comment.append("\n")
                comment.append_text(plain(said))
        spent = review.move_ms(step)
        if spent is not None:
            comment.append_text(plain(f"\ntook {spent / 1000:.1f} s", style="dim"))
        self.query_one("#review-comment", Static).update(comment)

    def _show_cursor(self) -> None:
        """A mark under the graph where the shown position is (the graph spreads the positions over its width)."""
        graph = self.query_one("#review-graph", Sparkline)
        width = graph.content_size.width or MOVES_WIDTH
        column = round(self.replay.step / max(1, self.replay.last) * (width - 1)) if self.review.analysed else 0
        self.query_one("#review-cursor", Static).update(Text(" " * column + "▲") if self.review.analysed else "")

    def _show_moves(self) -> None:
        """The move list with each move's sign, the current move highlighted and scrolled into view."""
        moves = self.review.annotated_moves()
        shown = self.query_one("#moves", Static)
        width = shown.content_size.width or MOVES_WIDTH
        shown.update(moves_columns(moves, width, current=self.replay.step))
        box = self.query_one("#moves-box", VerticalScroll)
        line = moves_line_of(moves, width, self.replay.step)
        box.scroll_to(y=max(0, line - box.size.height // 2), animate=False)

    def action_labelled(self, direction: int) -> None:
        """Jump to the next (1) or previous (-1) move labelled ?!, ? or ??."""
        step = self.review.labelled(self.replay.step, direction)
        if step is None:
            self.notify("No further labelled move" if direction > 0 else "No labelled move before this one")
            return
        if self.replay.go(step):
            self.show_step()

    def action_back(self) -> None:
        """Back (if the analysis has not come, the app stops waiting for it)."""
        self.dismiss(None)


class TronReviewScreen(ReviewScreen):
    """A Tron game's review: the replay with each tick's territory shaded and counted; `n` / `p` jump to the ticks
    where the lead changed hands."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "labelled(1)", "Next lead change"),
        Binding("p", "labelled(-1)", "Previous lead change"),
    ]
    summary_heading = "Territory"

    def compose(self) -> ComposeResult:
        """The review screen, its arena shading territory."""
        yield from super().compose()
        if isinstance(self.board, TronArena):
            self.board.shaded = True

    def below_step(self) -> ComposeResult:
        """The shown tick's territory per rider, then the comment."""
        yield Static(id="review-territory")
        yield from super().below_step()

    def show_step(self) -> None:
        """The tick, and each rider's squares in it as shaded (and the squares two riders reach at once)."""
        super().show_step()
        if not isinstance(self.board, TronArena):
            return
        counts = self.board.zone_counts
        shown = Text()
        for seat, count in enumerate(counts):
            shown.append_text(seat_chip(self.replay.game, seat))
            shown.append_text(plain(f" {self.replay.session.label(seat)}: {count} squares\n"))
        tied = sum(owner > len(counts) for owner in self.board.zones)
        shown.append_text(plain(f"{tied} squares reached at once by two", style="dim"))
        self.query_one("#review-territory", Static).update(shown)

    def action_labelled(self, direction: int) -> None:
        """Jump to the next (1) or previous (-1) tick where the lead changed hands."""
        step = self.review.labelled(self.replay.step, direction)
        if step is None:
            self.notify("No further lead change" if direction > 0 else "No lead change before this tick")
            return
        if self.replay.go(step):
            self.show_step()


def review_screen(model: ClientState, review: Review) -> ReviewScreen:
    """The review screen for `review`'s game."""
    return TronReviewScreen(model, review) if isinstance(review, TronReview) else ReviewScreen(model, review)
