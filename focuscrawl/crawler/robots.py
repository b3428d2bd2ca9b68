"""robots.txt rules per site, parsed with protego and cached in the process."""

from __future__ import annotations

import threading

from protego import Protego

__all__ = ["RobotsCache"]


class RobotsCache:
    """Parsed rules by site id; the database holds the text and its expiry."""

    def __init__(self, user_agent: str) -> None:
        self.agent = user_agent.split("/", 1)[0]
        self._rules: dict[int, tuple[str, Protego]] = {}
        self._lock = threading.Lock()

    def rules(self, sid: int, robots_txt: str) -> Protego:
        with self._lock:
            cached = self._rules.get(sid)
            if cached is not None and cached[0] == robots_txt:
                return cached[1]
        parsed = Protego.parse(robots_txt)
        with self._lock:
            self._rules[sid] = (robots_txt, parsed)
        return parsed

    def allowed(self, sid: int, robots_txt: str | None, url: str) -> bool:
        if not robots_txt:
            return True
        return bool(self.rules(sid, robots_txt).can_fetch(url, self.agent))

    def crawl_delay(self, sid: int, robots_txt: str | None) -> float | None:
        if not robots_txt:
            return None
        delay = self.rules(sid, robots_txt).crawl_delay(self.agent)
        return float(delay) if delay is not None else None
