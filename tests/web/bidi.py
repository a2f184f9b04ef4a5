"""Firefox driven over WebDriver BiDi (https://w3c.github.io/webdriver-bidi/), the protocol Firefox speaks itself:
`firefox-esr --headless --remote-debugging-port=0` serves it on a websocket, so no geckodriver and no Playwright
build of the browser are needed. Only what tests/web uses: one session, navigating a tab, keys and clicks
(input.performActions), screenshots and evaluating JavaScript in the page."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from tests.waiting import eventually
from tests.web.door import Tab

LISTENING = re.compile(r"WebDriver BiDi listening on (ws://\S+)")
KEYS = {  # Playwright's key names (tests/web/door.py Tab) -> WebDriver's key codes
    "Enter": "\ue007",
    "Tab": "\ue004",
    "Escape": "\ue00c",
    "Backspace": "\ue003",
    "ArrowLeft": "\ue012",
    "ArrowUp": "\ue013",
    "ArrowRight": "\ue014",
    "ArrowDown": "\ue015",
    "Shift": "\ue008",
    "Control": "\ue009",
    "Alt": "\ue00a",
}
RECORDER = """() => {
  // Keep what the terminal's websocket brings (the client's output, as one byte per character) and the text
  // frames the page sends (its size), as Playwright's websocket events do for chromium.
  const record = { output: "", sent: [] };
  window.gamenightRecord = record;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      record.sent.push(String(url));
      this.addEventListener("message", (event) => {
        if (typeof event.data === "string") return;
        const bytes = new Uint8Array(event.data);
        for (let i = 0; i < bytes.length; i += 8192) {
          record.output += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
        }
      });
    }
    send(data) {
      if (typeof data === "string") record.sent.push(data);
      super.send(data);
    }
  };
}"""


class BiDiError(Exception):
    """A command the browser answered with an error."""


class BiDi:
    """One WebDriver BiDi connection: commands sent with an id, each answered by the message with that id."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self._ids = itertools.count(1)
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        """Hand each answer to its command (events are not subscribed to, hence none come)."""
        async for frame in self.socket:
            message = json.loads(frame)
            waiting = self._answers.pop(message.get("id"), None)
            if waiting is not None and not waiting.done():
                waiting.set_result(message)

    async def command(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command and return its result."""
        number = next(self._ids)
        answer = self._answers[number] = asyncio.get_running_loop().create_future()
        await self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        message = await asyncio.wait_for(answer, 60)
        if message.get("type") == "error":
            raise BiDiError(f"{method}: {message.get('error')}: {message.get('message')}")
        result: dict[str, Any] = message["result"]
        return result

    async def close(self) -> None:
        """Close the connection."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        await self.socket.close()


class Firefox:
    """A headless Firefox with a profile of its own (in `folder`), driven over one BiDi session."""

    def __init__(self, proc: subprocess.Popen[bytes], bidi: BiDi) -> None:
        self.proc = proc
        self.bidi = bidi

    @classmethod
    async def start(cls, executable: Path, folder: Path) -> Firefox:
        """Start the browser, read the port it serves BiDi on (its log says it), open a session."""
        profile, log = folder / "profile", folder / "firefox.log"
        profile.mkdir()
        with log.open("wb") as sink:
            command = [str(executable), "--headless", "--no-remote", "--remote-debugging-port=0"]
            proc = subprocess.Popen([*command, "--profile", str(profile)], stdout=sink, stderr=subprocess.STDOUT)
        found: list[str] = []

        async def listening() -> bool:
            assert proc.poll() is None, log.read_text(errors="replace")
            found[:] = LISTENING.findall(log.read_text(errors="replace"))
            return bool(found)

        await eventually(listening, "firefox serving WebDriver BiDi")
        bidi = BiDi(await connect(f"{found[0]}/session", max_size=None))
        await bidi.command("session.new", capabilities={"alwaysMatch": {"acceptInsecureCerts": True}})
        await bidi.command("script.addPreloadScript", functionDeclaration=RECORDER)
        return cls(proc, bidi)

    async def open(self, url: str, width: int = 1200, height: int = 800) -> FirefoxTab:
        """The browser's tab, its viewport `width` x `height`, on `url`, once the client has drawn its first screen."""
        tree = await self.bidi.command("browsingContext.getTree", maxDepth=0)
        tab = FirefoxTab(self.bidi, tree["contexts"][0]["context"])
        viewport = {"width": width, "height": height}
        await self.bidi.command("browsingContext.setViewport", context=tab.context, viewport=viewport)
        await self.bidi.command("browsingContext.navigate", context=tab.context, url=url, wait="complete")

        async def drawn() -> bool:
            return bool(await tab.evaluate("document.body.classList.contains('-first-byte')"))

        await eventually(drawn, "the terminal's first output")
        return tab

    async def stop(self) -> None:
        """End the session and the browser."""
        with contextlib.suppress(BiDiError, TimeoutError):
            await self.bidi.command("browser.close")
        await self.bidi.close()
        try:
            await asyncio.to_thread(self.proc.wait, 30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def key_actions(key: str) -> list[dict[str, str]]:
    """The key downs and ups of a Playwright-style key name ("Enter", "Control+s", "n")."""
    values = [KEYS.get(part, part) for part in key.split("+")] if len(key) > 1 else [key]
    downs = [{"type": "keyDown", "value": value} for value in values]
    return downs + [{"type": "keyUp", "value": value} for value in reversed(values)]


class FirefoxTab(Tab):
    """A Firefox tab (a top-level browsing context) on the page, for one load of it (a reload starts the page's
    recorder afresh)."""

    def __init__(self, bidi: BiDi, context: str) -> None:
        self.bidi = bidi
        self.context = context
        self._output = b""

    async def output(self) -> bytes:
        """The client's output so far: what the page's recorder has, fetched from where the last fetch ended."""
        more = await self.evaluate(f"window.gamenightRecord.output.slice({len(self._output)})")
        self._output += str(more).encode("latin-1")
        return self._output

    async def sent(self) -> list[str]:
        """The websocket's URL and the text frames the page sent, as the recorder kept them."""
        return list(json.loads(await self.evaluate("JSON.stringify(window.gamenightRecord.sent)")))

    async def press(self, key: str) -> None:
        """Press and release a key, as a keyboard does."""
        await self._keys(key_actions(key))

    async def type(self, text: str) -> None:
        """Type `text` a key at a time."""
        await self._keys([action for char in text for action in key_actions(char)])

    async def _keys(self, actions: list[dict[str, str]]) -> None:
        """Perform key actions on the tab."""
        source = {"type": "key", "id": "keyboard", "actions": actions}
        await self.bidi.command("input.performActions", context=self.context, actions=[source])

    async def click(self, x: float, y: float) -> None:
        """A left click at (x, y) CSS pixels from the viewport's top left."""
        pointer = [
            {"type": "pointerMove", "x": round(x), "y": round(y), "origin": "viewport"},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0},
        ]
        source = {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": pointer}
        await self.bidi.command("input.performActions", context=self.context, actions=[source])

    async def evaluate(self, expression: str) -> Any:
        """A primitive JavaScript value (string, number, boolean, null) of an expression in the page."""
        answer = await self.bidi.command(
            "script.evaluate", expression=expression, target={"context": self.context}, awaitPromise=False
        )
        if answer["type"] == "exception":
            raise BiDiError(f"{expression}: {answer['exceptionDetails'].get('text')}")
        return answer["result"].get("value")

    async def screenshot(self, path: Path) -> None:
        """Save a PNG of the tab's viewport."""
        answer = await self.bidi.command("browsingContext.captureScreenshot", context=self.context)
        path.write_bytes(base64.b64decode(answer["data"]))
