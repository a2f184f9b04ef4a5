"""The quick menu (`n` in the lobby): a game against the AI in three choices, the last ones remembered.

The game, the AI's level and a time control (the create form's presets, for games with a clock); `Enter` on
Play (focused when it opens) starts it at once, so `n Enter` plays the last choice again. The choice is kept in
the client's config (`config.quick_choice`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.console import RenderableType
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select

from gamenight.client.config import saved_quick
from gamenight.client.model import AI, AI_LEVELS, DEFAULT_AI_LEVEL, ME, RoomPlan, SeatPlan
from gamenight.client.plain import plain
from gamenight.client.screens.create import PRESET_OPTIONS, TIME_PRESETS
from gamenight.protocol.vocab import GameDescription

DEFAULT_GAME = "othello"


@dataclass(frozen=True, slots=True)
class QuickChoice:
    """A quick game: which game, the AI's level, and the time-control preset (its index in `TIME_PRESETS`)."""

    game: str = DEFAULT_GAME
    level: int = DEFAULT_AI_LEVEL
    preset: int = 0

    def plan(self, description: GameDescription | None) -> RoomPlan:
        """The room: me in the first seat, the AI in every other; the preset's clock if the game has one."""
        seats = description.seat_count({}) if description is not None else 2
        clocked = description is not None and {s.name for s in description.options} >= PRESET_OPTIONS
        options = {k: v for k, v in TIME_PRESETS[self.preset][1].items() if v} if clocked else {}
        ais = tuple(SeatPlan(AI, level=self.level) for _ in range(max(1, seats - 1)))
        return RoomPlan(self.game, options, False, (SeatPlan(ME), *ais))


def last_quick() -> QuickChoice:
    """The quick menu's last choice from the config (the default game, level and no clock without one)."""
    saved = saved_quick()
    game, level, preset = saved.get("game"), saved.get("level"), saved.get("preset")
    return QuickChoice(
        game if isinstance(game, str) else DEFAULT_GAME,
        level if isinstance(level, int) and level in AI_LEVELS else DEFAULT_AI_LEVEL,
        preset if isinstance(preset, int) and 0 <= preset < len(TIME_PRESETS) else 0,
    )


class QuickMenuScreen(ModalScreen[QuickChoice | None]):
    """Three selectors and Play; closes with the choice, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "play", "Play"),
    ]

    def __init__(self, games: list[GameDescription], last: QuickChoice) -> None:
        super().__init__()
        self.games = {game.name: game for game in games}
        self.last = last if last.game in self.games else QuickChoice(next(iter(self.games), DEFAULT_GAME))

    def compose(self) -> ComposeResult:
        """The game, level and time-control rows, and the buttons."""
        with Vertical(classes="dialog", id="quick-dialog"):
            yield Label("Play against the AI", classes="dialog-title")
            yield self._row("Game", [(plain(g.title), g.name) for g in self.games.values()], self.last.game, "q-game")
            levels = [(f"level {level}", level) for level in AI_LEVELS]
            yield self._row("AI", levels, self.last.level, "q-level")
            presets = [(name, index) for index, (name, _) in enumerate(TIME_PRESETS)]
            yield self._row("Time control", presets, self.last.preset, "q-time")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Play (Enter)", variant="primary", id="play")
                yield Button("Cancel (Esc)", id="cancel")

    @staticmethod
    def _row(label: str, choices: Sequence[tuple[RenderableType, object]], value: object, field_id: str) -> Horizontal:
        """One labelled selector."""
        select: Select[object] = Select(choices, value=value, allow_blank=False, id=field_id, compact=True)
        return Horizontal(Label(label, classes="form-label"), select, classes="form-row")

    def on_mount(self) -> None:
        """Play has the focus: Enter starts the game as last chosen; the time row only for games with a clock."""
        self.query_one("#play", Button).focus()
        self._show_time_row()

    @on(Select.Changed, "#q-game")
    def _game_changed(self, event: Select.Changed) -> None:
        """A game without a clock (Tron) has no time control to choose."""
        event.stop()
        self._show_time_row()

    def _show_time_row(self) -> None:
        """Show the time-control row only for a game whose options include a clock."""
        game = self.games.get(str(self.query_one("#q-game", Select).value))
        clocked = game is not None and {s.name for s in game.options} >= PRESET_OPTIONS
        row = self.query_one("#q-time", Select).parent
        if row is not None:
            row.display = clocked

    def choice(self) -> QuickChoice:
        """What the selectors say."""
        game = str(self.query_one("#q-game", Select).value)
        level = self.query_one("#q-level", Select).value
        preset = self.query_one("#q-time", Select).value
        return QuickChoice(
            game,
            level if isinstance(level, int) else DEFAULT_AI_LEVEL,
            preset if isinstance(preset, int) and 0 <= preset < len(TIME_PRESETS) else 0,
        )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Play or cancel."""
        event.stop()
        if event.button.id == "play":
            self.action_play()
        else:
            self.action_cancel()

    def action_play(self) -> None:
        """Close with the choice."""
        self.dismiss(self.choice())

    def action_cancel(self) -> None:
        """Close without playing."""
        self.dismiss(None)
