"""Text that someone else wrote (a name, a chat line, a reason) or the server sent, shown exactly as written.

Textual reads a plain `str` as markup almost everywhere it draws one: a DataTable cell, a Static or a Label, a
Select's entries, a toast. A name such as "[/]x" then raises MarkupError and ends the app, "[red]" vanishes into a
style, and "[@click=app.quit]x[/]" becomes a link that runs an action. A Rich `Text` is never parsed, so every
string that is not a literal of this code reaches a widget through `plain`; a line that mixes our own styling with
such a string is built with `Text.assemble` / `Text.append`, never by formatting markup around it (the client
does not use `rich.markup.escape`: it loses a name's "\\[" and misses Textual's "[$variable]" markup).
"""

from __future__ import annotations

from rich.text import Text


def plain(text: object, style: str = "") -> Text:
    """`text` (any value, as `str` shows it) as a `Text` drawn literally, in `style` if given."""
    return Text(str(text), style=style)
