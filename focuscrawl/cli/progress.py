"""A progress line for long steps: redrawn in place on a terminal, one line per step
otherwise (logs, CI)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressLine"]

WIDTH = 30
LOG_EVERY_S = 5.0  # not on a terminal: a line of a long step this often


class ProgressLine:
    """Call with (what, done, total); total 0 shows the step without a bar."""

    def __init__(self, stream: TextIO = sys.stderr, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet
        self.tty = stream.isatty()
        self._what: str | None = None
        self._started = time.monotonic()
        self._drawn = 0.0
        self._finished = False
        self._logged = 0.0

    def __call__(self, what: str, done: int, total: int) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if what != self._what:
            if self._what is not None and self.tty:
                self.stream.write("\n")
            self._what, self._started, self._finished = what, now, False
            self._logged = now
            if not self.tty:
                self.stream.write(f"{what}...\n")
        elif self.tty and now - self._drawn < 0.1 and done < total:
            return
        self._drawn = now
        if self.tty:
            self.stream.write("\r" + self._line(what, done, total, now - self._started))
        elif total and done >= total and not self._finished:
            self._finished = True
            self.stream.write(f"{what}: {done:,}/{total:,} in {now - self._started:.0f} s\n")
        elif total and not self._finished and now - self._logged >= LOG_EVERY_S:
            self._logged = now  # a log hears from a long step every few seconds
            self.stream.write(f"{self._line(what, done, total, now - self._started)}\n")
        self.stream.flush()

    def close(self) -> None:
        if self._what is not None and self.tty and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()
        self._what = None

    @staticmethod
    def _line(what: str, done: int, total: int, seconds: float) -> str:
        if not total:
            return f"{what} ({seconds:.0f} s)"
        filled = int(WIDTH * min(done, total) / total)
        bar = "#" * filled + "-" * (WIDTH - filled)
        return f"{what} [{bar}] {done:,}/{total:,} ({seconds:.0f} s)"
