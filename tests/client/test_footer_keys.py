"""The footer's keys follow the game, and are not rebuilt when nothing in them changed (each rebuild cost the
client ~10 ms of CPU, a dozen times a move: most of a web session's CPU per move)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from gamenight.client.bindings import refresh_keys


class Keys(Screen[None]):
    """A screen whose `k` key shows only while `offered` is true."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("k", "take", "Take it"), Binding("q", "quit_game", "Quit")]

    def __init__(self) -> None:
        super().__init__()
        self.offered = False
        self.published = 0

    def compose(self) -> ComposeResult:
        yield Footer()

    def on_mount(self) -> None:
        self.bindings_updated_signal.subscribe(self, self._count)

    def _count(self, _screen: Any) -> None:
        self.published += 1

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.offered if action == "take" else True

    def action_take(self) -> None:
        """Nothing: the test only looks at the footer."""

    def action_quit_game(self) -> None:
        """Nothing: the test only looks at the footer."""


class KeysApp(App[None]):
    def on_mount(self) -> None:
        self.push_screen(Keys())


def shown(screen: Screen[Any]) -> set[str]:
    """The descriptions of the keys the footer draws now."""
    return {key.description for key in screen.query(FooterKey)}


async def test_the_footer_is_redrawn_when_its_keys_change_and_only_then() -> None:
    """Asking for the footer's keys again and again with nothing changed redraws it once at most; a key that
    becomes available is then drawn."""
    app = KeysApp()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, Keys)
        await pilot.pause()
        assert "Take it" not in shown(screen)
        before = screen.published
        for _ in range(10):
            refresh_keys(screen)
            await pilot.pause()
        assert screen.published - before <= 1
        screen.offered = True
        refresh_keys(screen)
        await pilot.pause()
        await pilot.pause()
        assert "Take it" in shown(screen) and "Quit" in shown(screen)
        settled = screen.published
        refresh_keys(screen)
        await pilot.pause()
        assert screen.published == settled
