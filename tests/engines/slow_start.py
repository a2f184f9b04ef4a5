"""Start another engine late: sleep `SECONDS`, then become `COMMAND ARGS` (exec, so no second process is left)."""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    """`slow_start.py SECONDS COMMAND [ARGS...]`."""
    time.sleep(float(sys.argv[1]))
    os.execv(sys.argv[2], sys.argv[2:])


if __name__ == "__main__":
    main()
