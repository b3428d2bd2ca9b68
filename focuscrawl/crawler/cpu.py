"""Where a crawler's CPU goes: each stage's thread CPU (``time.thread_time``), summed over
the threads that run it.

A crawler's process CPU says what a page costs; this says where. Sampling profilers
mislead here: a crawler runs dozens of threads that take turns at the GIL, and a sampler
that charges whoever holds it made the store look three times its cost. The stages:

* ``claim``: reading URLs off the frontier (a batch at a time);
* ``fetch``: the requests, robots.txt's among them (libcurl's work on the worker's thread);
* ``parse``: what a response is read into: sniffed, decoded, parsed, its links and the
  words around them;
* ``store``: a batch's rows written, the link learner's check-in estimates among them.

What no stage holds is the rest: threads waiting and waking, leases, the watchdog, and
the process's start.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["STAGES", "StageCpu"]

STAGES = ("claim", "fetch", "parse", "store")


class StageCpu:
    """Thread CPU seconds by stage, added to from any thread."""

    def __init__(self, on_add: Callable[[str, float], None] | None = None) -> None:
        """``on_add(stage, seconds)``: told of each addition (the crawler's metrics)."""
        self._lock = threading.Lock()
        self._seconds = dict.fromkeys(STAGES, 0.0)
        self._on_add = on_add

    def add(self, stage: str, since: float) -> None:
        """Count the CPU this thread spent since ``since`` (a ``time.thread_time()``)."""
        spent = time.thread_time() - since
        with self._lock:
            self._seconds[stage] += spent
        if self._on_add is not None:
            self._on_add(stage, spent)

    def seconds(self) -> dict[str, float]:
        """Each stage's seconds so far, in ``STAGES`` order."""
        with self._lock:
            return dict(self._seconds)

    def describe(self, pages: int, process_seconds: float) -> str:
        """One line: each stage's milliseconds a page, and the process's in all."""
        per_page = 1e3 / max(pages, 1)
        stages = ", ".join(f"{s} {v * per_page:.2f}" for s, v in self.seconds().items())
        return f"CPU a page, ms: {stages}; {process_seconds * per_page:.2f} in all"
