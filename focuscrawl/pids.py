"""Whether a process of this machine still runs: how a writer tells the files a killed
writer left (named with its PID) from those a live one is writing."""

from __future__ import annotations

import os

__all__ = ["alive"]


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (another user's counts: it may not be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
