"""The gamenight terminal client: a Textual app that talks to a gamenight server over the wire protocol."""
