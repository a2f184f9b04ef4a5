"""Several server nodes acting as one (`gamenight-server --cluster redis://...`).

The design and its reasons: docs/architecture.md, "A cluster of nodes".

Pure coordination over Redis, no game logic: the bus (pub/sub that reconnects), the node registry with its
heartbeat and the placement of new rooms, the room leases, and the directory of rooms every node mirrors
(`coord.py`); the node itself (`node.py`) ties them to a `GameServer`. Nothing here is imported without
`--cluster`, so a single server never loads `redis`.
"""
