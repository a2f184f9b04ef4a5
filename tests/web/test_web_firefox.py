"""The web front door (issue 35) in Firefox: Debian's headless firefox-esr, driven over WebDriver BiDi (tests/web/
bidi.py), plays on a real `gamenight-server --web` process; what the browser player did is checked over the
protocol by an ordinary peer, as tests/web/test_web_front_door.py does in chromium."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.procs import HAS_PROC
from tests.web.bidi import Firefox
from tests.web.door import othello_legal, play_until, start_ai_game

FIREFOX = Path("/usr/bin/firefox-esr")
if not FIREFOX.exists() or not HAS_PROC:
    if os.environ.get("CI") == "true":  # CI installs firefox-esr (.ci/run): never skip there
        raise RuntimeError(f"{FIREFOX} is missing: .ci/run should have installed firefox-esr")
    pytest.skip("Debian's firefox-esr (/usr/bin/firefox-esr) is not installed", allow_module_level=True)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def firefox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Firefox]:
    """One headless Firefox for the module, with a profile of its own (a browser is slow to start)."""
    browser = await Firefox.start(FIREFOX, tmp_path_factory.mktemp("firefox"))
    yield browser
    await browser.stop()


async def test_a_firefox_player_plays_othello_against_the_ai_by_keyboard_and_mouse(firefox, server, watcher, artefacts):
    """A friend with Firefox opens the page (it has the keyboard focus at once), types a name, presses n and plays
    Othello moves against the AI with the keyboard, then one with a click on its square; an ordinary client
    watching the room sees that player's moves."""
    tab = await firefox.open(server.page_url)
    room, seat = await start_ai_game(tab, watcher, "fay", artefacts / "firefox-lobby.png")
    state = await play_until(watcher, room.room, {seat: tab}, lambda state: len(state.moves) >= 6)
    moved = [m for m in watcher.seen if m.type == "moved" and m.room == room.room]
    assert len([m for m in moved if m.seat == seat]) >= 3
    while seat not in state.to_move:  # the AI answers
        state = await watcher.state_after(room.room, state.seq)
    await tab.on_screen("Your move")
    target = othello_legal(room, state, seat)[-1]  # not the cursor's square (the first legal one): the click's
    await tab.click_square(target)
    assert (await watcher.state_after(room.room, state.seq)).moves[-1] == target
    await tab.screenshot(artefacts / "firefox-othello.png")
