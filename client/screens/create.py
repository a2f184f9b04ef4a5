"""The create-room form, built only from the server's description of each game and its options.

No game has code here: an option's type (int, str, bool, choice), choices, bounds, default and help
decide its field, and its title (its label, else its name) heads the row; the name stays the wire key.
The seat list offers, per seat: open, me, an AI level, or a named bot of that game.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Input, Label, Select, Static, Switch

from gamenight.client.model import (
    AI,
    AI_LEVELS,
    BOT,
    DEFAULT_AI_LEVEL,
    ME,
    OPEN,
    RoomPlan,
    SeatPlan,
)
from gamenight.client.plain import plain
from gamenight.protocol.vocab import GameDescription, OptionError, OptionKind, OptionSpec

TIME_PRESETS: tuple[tuple[str, dict[str, int]], ...] = (
    ("no clock", {"clock_s": 0, "increment_s": 0, "days_per_move": 0}),
    ("1+0 bullet", {"clock_s": 60, "increment_s": 0, "days_per_move": 0}),
    ("3+2 blitz", {"clock_s": 180, "increment_s": 2, "days_per_move": 0}),
    ("5+3 blitz", {"clock_s": 300, "increment_s": 3, "days_per_move": 0}),
    ("10+5 rapid", {"clock_s": 600, "increment_s": 5, "days_per_move": 0}),
    ("15+10 rapid", {"clock_s": 900, "increment_s": 10, "days_per_move": 0}),
    ("a day per move", {"clock_s": 0, "increment_s": 0, "days_per_move": 1}),
)
"""The create form's time-control presets ("minutes + seconds per move"), filling the room's clock options."""
PRESET_OPTIONS = frozenset(TIME_PRESETS[0][1])
ADVANCED = frozenset({"ai_ms", "ai_pace_ms", "seed"})
"""Options that tune the server rather than the game (the AI's milliseconds and pace, an arena's random seed):
under the forms' collapsed "Advanced" rows, as is a turn-based game's `countdown_ms` (it only delays a live game)."""


def advanced(spec: OptionSpec, game: GameDescription) -> bool:
    """True for an option the forms keep under "Advanced"."""
    return spec.name in ADVANCED or (spec.name == "countdown_ms" and not game.simultaneous)


def clocked(game: GameDescription) -> bool:
    """True when the game has the clock options the time-control presets fill."""
    return {spec.name for spec in game.options} >= PRESET_OPTIONS


def preset_row(field_id: str = "preset", help_text: str = "fills the clock fields below") -> Horizontal:
    """The time-control presets: "minutes + seconds added per move"."""
    presets = Select(
        [(name, index) for index, (name, _) in enumerate(TIME_PRESETS)],
        value=0,
        allow_blank=False,
        id=field_id,
        compact=True,
    )
    return Horizontal(
        Label("Time control", classes="form-label"),
        presets,
        Static(plain(f"minutes + seconds added per move; {help_text}"), classes="form-help"),
        classes="form-row",
    )


def option_row(spec: OptionSpec) -> Horizontal:
    """One option's row: its title, field and help (with its bounds)."""
    help_text = spec.help + (f" ({spec.minimum}-{spec.maximum})" if spec.minimum is not None else "")
    return Horizontal(
        Label(plain(spec.title), classes="form-label"),
        option_widget(spec),
        Static(plain(help_text), classes="form-help"),
        classes="form-row",
    )


def option_rows(game: GameDescription) -> list[Widget]:
    """A game's option rows: the time-control presets (games with a clock), the options a player sets, and the
    server's internals in a collapsed "Advanced" section."""
    rows: list[Widget] = [preset_row()] if clocked(game) else []
    rows += [option_row(spec) for spec in game.options if not advanced(spec, game)]
    inner = [option_row(spec) for spec in game.options if advanced(spec, game)]
    if inner:
        rows.append(Collapsible(*inner, title="Advanced", collapsed=True, classes="advanced"))
    return rows


def apply_preset(screen: Widget, index: object) -> bool:
    """Fill the clock fields of `screen` from preset `index` (they stay editable); False for no preset."""
    if not isinstance(index, int) or not 0 <= index < len(TIME_PRESETS):
        return False
    for name, value in TIME_PRESETS[index][1].items():
        for field in screen.query(f"#opt-{name}").results(Input):
            if field.value != str(value):
                field.value = str(value)
    return True


def seat_choices(game: GameDescription) -> list[tuple[Text, str]]:
    """The (label, value) entries of a seat's selector (a bot's name as its program chose it)."""
    choices = [("open seat", OPEN), ("me", ME)]
    choices += [(f"AI level {level}", f"{AI}:{level}") for level in AI_LEVELS]
    choices += [(f"bot {bot}", f"{BOT}:{bot}") for bot in game.bots]
    return [(plain(label), value) for label, value in choices]


def default_seat(index: int) -> str:
    """What a seat starts as: me first, an AI second, the rest open."""
    return ME if index == 0 else f"{AI}:{DEFAULT_AI_LEVEL}" if index == 1 else OPEN


def seat_plan(value: str) -> SeatPlan:
    """A seat selector's value as a plan."""
    kind, _, arg = value.partition(":")
    if kind == AI:
        return SeatPlan(AI, level=int(arg))
    if kind == BOT:
        return SeatPlan(BOT, bot=arg)
    return SeatPlan(kind if kind in (OPEN, ME) else OPEN)


def option_widget(spec: OptionSpec) -> Widget:
    """The field for one option: a switch, a selector of the allowed values, or a text input."""
    field_id = f"opt-{spec.name}"
    if spec.kind == OptionKind.BOOL:
        return Switch(value=bool(spec.default), id=field_id)
    if spec.choices:
        options = [(plain(choice), choice) for choice in spec.choices]
        value = spec.default if spec.default in spec.choices else spec.choices[0]
        return Select(options, value=value, allow_blank=False, id=field_id, compact=True)
    text = "" if spec.default is None else str(spec.default)
    placeholder = "random" if spec.default is None else spec.kind
    return Input(
        text,
        placeholder=placeholder,
        type="integer" if spec.kind == OptionKind.INT else "text",
        id=field_id,
        compact=True,
    )


def option_value(spec: OptionSpec, widget: Widget) -> Any:
    """The value an option's field holds, checked; OptionError (a ValueError) saying what is wrong."""
    if isinstance(widget, Input):
        return spec.parse_text(widget.value)
    if isinstance(widget, (Switch, Select)):
        return spec.check(widget.value)
    raise OptionError(f"{spec.title} has no field")


Plan = TypeVar("Plan")


class FormScreen(ModalScreen[Plan | None], Generic[Plan]):
    """A form that closes with the plan it reads from its fields (`plan`, ValueError for a mistake) or None."""

    @abstractmethod
    def plan(self) -> Plan:
        """What the form says, or ValueError saying what is wrong with it."""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Submit or cancel."""
        event.stop()
        if event.button.id == "submit":
            self.action_submit()
        else:
            self.action_cancel()

    def action_submit(self) -> None:
        """Close with the plan, or say what is wrong with the form."""
        try:
            plan = self.plan()
        except ValueError as exc:
            self.notify(str(exc), title="Check the form", severity="error")
            return
        self.dismiss(plan)

    def action_cancel(self) -> None:
        """Close without a plan."""
        self.dismiss(None)


class CreateRoomScreen(FormScreen[RoomPlan]):
    """Choose a game, its options, who sits where and whether the room is private."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Create"),
    ]

    def __init__(self, games: list[GameDescription]) -> None:
        super().__init__()
        self.games = {game.name: game for game in games}
        self.game = games[0]
        self._building = asyncio.Lock()  # rebuilds triggered by events must not interleave
        self._preset = 0  # the time-control preset last applied (the selector's first value needs no applying)

    def compose(self) -> ComposeResult:
        """The game selector, the option rows, the seat rows, privacy and the buttons."""
        with Vertical(classes="dialog", id="create-dialog"):
            yield Label("Open a room", classes="dialog-title")
            with Horizontal(classes="form-row"):
                yield Label("Game", classes="form-label")
                yield Select(
                    [(plain(g.title), g.name) for g in self.games.values()],
                    value=self.game.name,
                    allow_blank=False,
                    id="game",
                    compact=True,
                )
            with VerticalScroll(id="create-fields"):
                yield Vertical(id="options")
                yield Label("Seats", classes="form-heading")
                yield Vertical(id="seats")
                with Horizontal(classes="form-row"):
                    yield Label("Private", classes="form-label")
                    yield Switch(value=False, id="private")
                    yield Static("only people with the code can join", classes="form-help")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Create", variant="primary", id="submit")
                yield Button("Cancel", id="cancel")

    async def on_mount(self) -> None:
        """Build the fields of the first game."""
        await self._rebuild(options=True)

    async def _rebuild(self, options: bool) -> None:
        """Rebuild the option rows (if asked) and the seat rows, one rebuild at a time."""
        async with self._building:
            if options:
                await self._build_options()
            await self._build_seats()

    async def _build_options(self) -> None:
        """One row per option of the chosen game: its title, field, help."""
        container = self.query_one("#options", Vertical)
        await container.remove_children()
        self._preset = 0
        await container.mount_all(option_rows(self.game))

    async def _build_seats(self) -> None:
        """One selector per seat; the count follows the options (a "players" option, say)."""
        container = self.query_one("#seats", Vertical)
        count = self.game.seat_count(self._raw_values())
        old = [w.value for w in container.query(Select)]
        await container.remove_children()
        choices = seat_choices(self.game)
        allowed = {value for _, value in choices}
        rows = []
        for index in range(count):
            value = old[index] if index < len(old) and old[index] in allowed else default_seat(index)
            selector = Select(choices, value=value, allow_blank=False, classes="seat", compact=True)
            label = Label(plain(self.game.seat_label(index)), classes="form-label")
            rows.append(Horizontal(label, selector, classes="form-row"))
        await container.mount_all(rows)

    def _raw_values(self) -> dict[str, Any]:
        """Each option's field value, parsed where possible (unparsable ones are left out)."""
        values: dict[str, Any] = {}
        for spec in self.game.options:
            matches = self.query(f"#opt-{spec.name}")
            if not matches:
                continue
            try:
                values[spec.name] = option_value(spec, matches.first())
            except ValueError:
                continue
        return values

    def plan(self) -> RoomPlan:
        """The room the form describes; ValueError naming the first bad field."""
        options: dict[str, Any] = {}
        for spec in self.game.options:
            value = option_value(spec, self.query_one(f"#opt-{spec.name}"))
            # Defaults are left for the server to fill in, so a room lists only what was changed.
            if value is not None and value != spec.default:
                options[spec.name] = value
        seats = tuple(seat_plan(str(s.value)) for s in self.query_one("#seats").query(Select))
        return RoomPlan(self.game.name, options, self.query_one("#private", Switch).value, seats)

    # -- events ---------------------------------------------------------------------------------------------
    @on(Select.Changed, "#game")
    async def _game_changed(self, event: Select.Changed) -> None:
        """Another game: rebuild its options and seats."""
        event.stop()
        if event.value in self.games and event.value != self.game.name:
            self.game = self.games[str(event.value)]
            await self._rebuild(options=True)

    @on(Select.Changed, "#seats Select")
    def _seat_changed(self, event: Select.Changed) -> None:
        """Only one seat can be "me": choosing it elsewhere opens the old one."""
        event.stop()
        if event.value != ME:
            return
        for selector in self.query_one("#seats").query(Select):
            if selector is not event.select and selector.value == ME:
                selector.value = OPEN

    @on(Select.Changed, "#preset")
    def _preset_chosen(self, event: Select.Changed) -> None:
        """A time-control preset fills the clock fields (which stay editable)."""
        event.stop()
        if event.value != self._preset and apply_preset(self, event.value):
            self._preset = int(str(event.value))

    @on(Select.Changed, "#options Select")
    @on(Input.Changed, "#options Input")
    async def _option_changed(self, event: Select.Changed | Input.Changed) -> None:
        """An option may change the number of seats."""
        event.stop()
        seats = len(self.query_one("#seats").query(Select))
        if self.game.seat_count(self._raw_values()) != seats:
            await self._rebuild(options=False)
